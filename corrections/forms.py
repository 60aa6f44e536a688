"""The public correction form and the validation it shares with the API."""

from __future__ import annotations

import re
import secrets
import time

from django import forms
from django.core import signing
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.utils.html import escape
from django.utils.safestring import mark_safe

from corrections import selectors

EXPLANATION_MAX = 5000
PROPOSED_VALUE_MAX = 2000
SOURCE_MAX = 500
LOCATOR_MAX = 300
# A person needs a few seconds to read and write; a day-old form page is stale.
MIN_SECONDS = 3
MAX_SECONDS = 24 * 3600
TIMING_SALT = "reviews.correction-form"
DOI = re.compile(r"^(doi:|https?://(dx\.)?doi\.org/)?10\.\d{4,9}/\S+$", re.IGNORECASE)
http_url = URLValidator(schemes=["http", "https"])


def validate_supporting_source(text: str) -> str:
    """A supporting source is an http(s) URL or a DOI; anything else (javascript:, data:) is refused."""
    text = text.strip()
    if not text or DOI.match(text):
        return text
    try:
        http_url(text)
    except ValidationError:
        raise ValidationError("Give an http(s) URL or a DOI (10.xxxx/...).") from None
    return text


def validate_proposal(*, target_type: str, field_name: str, proposed_value: str) -> None:
    """A proposed value must be one the field can hold ("about 0.55" is not a number): said now, to
    the submitter, rather than when a curator tries to apply it."""
    if field_name and not proposed_value.strip():
        raise ValidationError({"proposed_value": "Say what the value should be, or choose the record as a whole."})
    if field_name:
        problem = selectors.value_problem(target_type, field_name, proposed_value)
        if problem:
            raise ValidationError({"proposed_value": problem})


def parse_target(choice: str) -> tuple[str, str, str]:
    """'type:stable-id:field' -> (type, stable id, field); the field may be empty."""
    parts = choice.split(":")
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise ValidationError("Choose what should change.")
    return parts[0], parts[1], parts[2]


def timing_stamp() -> str:
    """A signed time stamp with a nonce: the form may be sent once (`CorrectionForm.clean` spends it)."""
    return signing.dumps({"t": time.time(), "n": secrets.token_urlsafe(12)}, salt=TIMING_SALT)


def stamp_spend(nonce: str) -> bool:
    """Mark a stamp's nonce used, in the shared cache (Redis in production, so every process sees
    it) for as long as the stamp is valid; False if it was used already. `cache.add` is atomic."""
    return cache.add(f"correction-stamp:{nonce}", 1, timeout=MAX_SECONDS + 60)


class OptionsSelect(forms.Select):
    """A select whose options are written in Python, byte for byte as Django's select templates write
    them: a protocol page's form offers 200 and more, and Django renders a template per option."""

    def render(self, name, value, attrs=None, renderer=None) -> str:
        choices = self.choices
        self.choices = []
        try:
            tag = super().render(name, value, attrs, renderer)  # the select and its attributes, no option
        finally:
            self.choices = choices
        selected, found = self.format_value(value), False
        options = []
        for option_value, label in self.choices:
            text = "" if option_value is None else str(option_value)
            mark = ""
            if not found and text in selected:
                mark, found = " selected", True  # only the first match, as Select marks it
            options.append(f'\n  <option value="{escape(text)}"{mark}>{escape(label)}</option>\n')
        head, _, tail = tag.rpartition("\n</select>")
        return mark_safe(f"{head}{''.join(options)}\n</select>{tail}")


#: What the refusals of the inputs a person never sees say (the time stamp, the honeypot):
#: there is no field to mark, so each is an error of the whole form naming what happened and what to do.
TOO_QUICK = (
    "That was quick: this suggestion was sent within {seconds} seconds of the page opening, which is how"
    " spam robots send, so it was not accepted. What you wrote is kept below: wait a moment, then send it again."
)
TOO_OLD = (
    "This form is more than a day old, so it was not accepted. What you wrote is kept below on a fresh"
    " form: check it and send it again."
)
UNCHECKED = (
    "This form could not be checked (its time stamp is missing or was altered), so it was not accepted."
    " What you wrote is kept below on a fresh form: send it again."
)
SENT_ALREADY = "This form was sent already. To send another suggestion, use the fresh form below."
TRAP_FILLED = (
    'A field people never see ("Leave this empty") was filled in, as spam robots do, so this suggestion was'
    " not accepted. If you are a person, your browser's autofill may have filled it: it is emptied now, send"
    " the form again."
)


class CorrectionForm(forms.Form):
    record = forms.CharField(widget=forms.HiddenInput, max_length=200)
    # The record's fields and the values its page offers (corrections.selectors: a search finds the
    # others on the form's own page); static/js/correction-picker.js adds a filter box over them.
    target = forms.ChoiceField(
        label="What should change?", widget=OptionsSelect(attrs={"class": "filterable", "data-filter-label": "Filter"})
    )
    proposed_value = forms.CharField(
        label="Proposed value",
        required=False,
        max_length=PROPOSED_VALUE_MAX,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Plain text, as the source prints it.",
    )
    explanation = forms.CharField(
        label="Explanation",
        max_length=EXPLANATION_MAX,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="What is wrong, and where the source says otherwise.",
    )
    supporting_source = forms.CharField(label="Supporting source (URL or DOI)", required=False, max_length=SOURCE_MAX)
    supporting_locator = forms.CharField(
        label="Where in that source (page, table, paragraph)", required=False, max_length=LOCATOR_MAX
    )
    contact_email = forms.EmailField(
        label="Your email (optional)",
        required=False,
        max_length=254,
        help_text="Only to tell you the decision. Never shown publicly.",
    )
    # A field people never see: bots that fill every input give themselves away.
    website = forms.CharField(
        required=False,
        label="Leave this empty",
        widget=forms.TextInput(attrs={"autocomplete": "off", "tabindex": "-1"}),
    )
    started = forms.CharField(
        widget=forms.HiddenInput, max_length=200, error_messages={"required": UNCHECKED, "max_length": UNCHECKED}
    )
    #: Inputs a person never sees: their errors are the whole form's (see TOO_QUICK and the others).
    UNSEEN = ("started", "website")  # (a form without its record is a 404: corrections.views)

    def __init__(self, *args, choices: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].choices = choices
        if not self.is_bound:
            self.initial.setdefault("started", timing_stamp())

    def clean_supporting_source(self) -> str:
        return validate_supporting_source(self.cleaned_data["supporting_source"])

    def clean_website(self) -> str:
        if self.cleaned_data["website"]:
            raise ValidationError(TRAP_FILLED)
        return ""

    def clean_started(self) -> str:
        """The stamp's nonce, once its signature and age are checked (spent in `clean`)."""
        try:
            stamp = signing.loads(self.cleaned_data["started"], salt=TIMING_SALT, max_age=MAX_SECONDS)
        except signing.SignatureExpired:
            raise ValidationError(TOO_OLD) from None
        except signing.BadSignature:
            raise ValidationError(UNCHECKED) from None
        if not (isinstance(stamp, dict) and isinstance(stamp.get("t"), float) and isinstance(stamp.get("n"), str)):
            raise ValidationError(UNCHECKED)  # a stamp of the earlier format, which had no nonce
        if time.time() - stamp["t"] < MIN_SECONDS:
            raise ValidationError(TOO_QUICK.format(seconds=MIN_SECONDS))
        return stamp["n"]

    def clean(self):
        cleaned = super().clean()
        if "target" in cleaned:
            target_type, _id, field_name = parse_target(cleaned["target"])
            validate_proposal(
                target_type=target_type, field_name=field_name, proposed_value=cleaned.get("proposed_value", "")
            )
        # Spent only by a form that is otherwise valid: a visitor who fixes a mistake sends the same stamp again.
        if not self.errors and "started" in cleaned and not stamp_spend(cleaned["started"]):
            self.add_error("started", SENT_ALREADY)
        if self.errors.get("started") or self.errors.get("website"):
            self.data = self.data.copy()
            self.data["started"] = timing_stamp()  # a fresh stamp, so the re-rendered form can be sent
            self.data["website"] = ""
        for name in self.UNSEEN:  # no field to mark: said for the whole form
            for message in self.errors.pop(name, []):
                self.add_error(None, message)
        return cleaned

    def fields_in_error(self) -> list[str]:
        """The labels of the fields a person sees and must correct, in the form's order."""
        return [field.label for field in self if field.errors]
