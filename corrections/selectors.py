"""What the public may suggest corrections to: the record types, their correctable fields, their
labels and current values, and the choices a record page's form offers (read only; an accepted
value is written by `corrections.services`)."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeAlias

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q, QuerySet

from common.numbers import is_number_field, refuse_other_digits
from common.versions import version_current
from records.models import (
    BaselineRole,
    Configuration,
    Dataset,
    Decision,
    Evaluation,
    EvidenceRow,
    Protocol,
    Result,
    Source,
    quote_problem_of,
)
from records.protocol_summary import protocol_summary
from records.values import display, exact_text

# model name -> (field, label) pairs a suggestion may concern; the order is the form's order.
CORRECTABLE_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "protocol": (
        ("title", "title"),
        ("summary", "summary"),
        ("procedure", "procedure"),
        ("version_label", "version"),
        ("metric_description", "metric description"),
        ("metric_unit", "metric unit"),
        ("source_locator", "source locator"),
    ),
    "evaluation": (
        ("title", "title"),
        ("setup", "evaluation setup"),
        ("aggregation", "aggregation"),
        ("uncertainty", "uncertainty note"),
        ("measured_by_name", "who measured it"),
        ("reading_method", "how the value was read"),
        ("coverage_scored", "coverage scored"),
        ("coverage_eligible", "coverage eligible"),
        ("source_locator", "source locator"),
        ("quote", "quote"),
        ("concern_locator", "concern locator"),
    ),
    "result": (
        ("value", "value"),
        ("unit", "unit"),
        ("printed_value", "printed value"),
        ("uncertainty_kind", "kind of uncertainty"),
        ("uncertainty_value", "± figure"),
        ("lower_bound", "lower bound"),
        ("upper_bound", "upper bound"),
        ("uncertainty_level", "confidence level"),
        ("num_runs", "number of runs"),
    ),
    "configuration": (
        ("name", "name"),
        ("family", "family"),
        ("parameter_count", "parameter count"),
        ("method", "method"),
    ),
    "dataset": (
        ("name", "name"),
        ("description", "description"),
        ("train_size", "train size"),
        ("test_size", "test size"),
        ("num_classes", "classes"),
        ("sequence_length_bp", "sequence length (bp)"),
        ("metric", "metric"),
    ),
    "source": (
        ("title", "title"),
        ("venue", "venue"),
        ("citation", "citation"),
        ("published_date", "published date"),
        ("doi", "DOI"),
        ("pmcid", "PMCID"),
        ("arxiv_id", "arXiv id"),
        ("arxiv_version", "arXiv version"),
        ("url", "URL"),
    ),
    "evidencerow": (("statement", "statement"), ("locator", "locator"), ("quote", "quote")),
    "baselinerole": (("selection_rule", "selection rule"), ("requirements", "requirements")),
    "decision": (("title", "title"), ("description", "description")),
}
MODELS: dict[str, type[models.Model]] = {
    str(model._meta.model_name): model
    for model in (
        Protocol,
        Evaluation,
        Result,
        Configuration,
        Dataset,
        Source,
        EvidenceRow,
        BaselineRole,
        Decision,
    )
}
# A record of one of MODELS. They share no base class that declares their `stable_id`, so the type
# checker is told nothing more than that.
Target: TypeAlias = Any


def target_type_of(record: Target) -> str:
    """A record's type as suggestions name it ("protocol", "evaluation", ...)."""
    return str(record._meta.model_name)


def target_types() -> list[str]:
    return list(MODELS)


def record_type_labels() -> dict[str, str]:
    """model name -> what curators call that kind of record ("Evidence row")."""
    return {name: str(model._meta.verbose_name).capitalize() for name, model in MODELS.items()}


def resolve(target_type: str, stable_id: str) -> Target | None:
    model = MODELS.get(target_type)
    return None if model is None else model._default_manager.filter(stable_id=stable_id).first()


def field_label(target_type: str, field_name: str) -> str | None:
    return dict(CORRECTABLE_FIELDS.get(target_type, ())).get(field_name)


def clean_text(field: Any, text: str, record: models.Model | None) -> Any:
    """`text` as a value of `field`, or ValidationError with the field's own words (choices listed)."""
    try:
        if is_number_field(field):
            refuse_other_digits(text)  # int('١٢٣') is 123: refused, not translated
        return field.clean(text.strip() if text.strip() or not field.null else None, record)
    except ValidationError as exc:
        if exc.error_list and exc.error_list[0].code == "invalid_choice":
            raise ValidationError(
                f"{text.strip()!r} is not one of: {', '.join(value for value, _label in field.flatchoices if value)}"
            ) from None
        raise


def value_problem(target_type: str, field_name: str, text: str) -> str:
    """Why `text` cannot be a value of the field (its type, length, choices), or "" when it can.

    Checked when a suggestion is sent; rules across fields (a printed value showing the value) are
    checked when a curator applies it."""
    model = MODELS.get(target_type)
    if model is None or field_label(target_type, field_name) is None:
        return ""  # the target itself is refused elsewhere, with its own message
    try:
        clean_text(model._meta.get_field(field_name), text, None)
    except ValidationError as exc:
        return f"not a valid {field_label(target_type, field_name)}: {' '.join(exc.messages)}"
    return ""


def field_text(record: Target, field_name: str) -> str:
    """A field's current value as plain text (exact decimals, ISO dates, related records by stable id)."""
    value = getattr(record, field_name)
    if value is None:
        return ""
    if isinstance(value, models.Model):
        return getattr(value, "stable_id", str(value.pk))
    if isinstance(value, Decimal):
        return exact_text(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def label_of(record: Target) -> str:
    if isinstance(record, Result):
        return f"{record.evaluation.title}: {record.display_value} {record.unit}"
    return str(record)


def page_of(record: Target | None) -> str:
    """The public page a suggestion's record is shown on ("" when it is gone): its own page, or, for
    a result, its evaluation's row on the protocol page, where the form offered it."""
    if record is None:
        return ""
    if isinstance(record, Result):
        evaluation = record.evaluation
        return f"{evaluation.protocol.get_absolute_url()}#evaluation-{evaluation.stable_id}"
    if record.page_url_name:
        return record.get_absolute_url()
    protocol = getattr(record, "protocol", None)
    return protocol.get_absolute_url() if protocol is not None else ""


def protocol_of(record: Target) -> str:
    if isinstance(record, Protocol):
        return record.stable_id
    if isinstance(record, Result):
        return record.evaluation.protocol.stable_id
    protocol = getattr(record, "protocol", None)
    return protocol.stable_id if protocol is not None else ""


def _results_of(record: Target) -> QuerySet[Result] | None:
    """The results whose values a record's form offers: a protocol's or an evaluation's (None for others)."""
    if isinstance(record, Protocol):
        return Result.objects.filter(evaluation__protocol=record)
    if isinstance(record, Evaluation):
        return record.results.all()
    return None


def offers_values(record: Target) -> bool:
    """Whether a record's form offers values (a protocol's or an evaluation's): its page has a search."""
    return _results_of(record) is not None


def value_count(record: Target) -> int:
    """How many values a record's form offers (one query; a protocol's from its summary, which its
    page reads too)."""
    if isinstance(record, Protocol):
        return protocol_summary(protocol=record).result_count
    results = _results_of(record)
    return 0 if results is None else results.count()


# A value as the pickers read it (stable id, value, unit, task, configuration's short and full
# name), in the order they list values: by task, then configuration.
VALUE_COLUMNS = (
    "stable_id",
    "value",
    "unit",
    "evaluation__dataset__name",
    "evaluation__configuration__short_name",
    "evaluation__configuration__name",
)
VALUE_ORDER = ("evaluation__dataset__name", "evaluation__configuration__name", "stable_id")


def page_choices(record: Target, *, values_up_to: int | None = None) -> list[tuple[str, str]]:
    """The options of a record's "what should change?" select: (type:stable_id:field, label).

    A protocol's or an evaluation's form offers every one of its results' values (no cap: a value
    the form does not offer cannot be corrected from it), each named by its task, its configuration,
    its value and unit, ordered by task then configuration: one query. With `values_up_to`, the
    values only when the record has at most that many (the form on a record's page; with more, it
    links to the form's own page, which offers them all), else the record's own fields only."""
    kind = target_type_of(record)
    choices = [(f"{kind}:{record.stable_id}:", f"this {record._meta.verbose_name} as a whole")]
    choices += [(f"{kind}:{record.stable_id}:{name}", label) for name, label in CORRECTABLE_FIELDS[kind]]
    results: Iterable[tuple[str, Decimal, str, str, str, str]]
    columns, order = VALUE_COLUMNS, VALUE_ORDER
    of_record = _results_of(record)
    results = []
    if of_record is not None and values_up_to != 0:
        results = list(of_record.order_by(*order).values_list(*columns)[:values_up_to])
    if values_up_to is not None and len(results) == values_up_to:
        results = []  # as many as the limit, or more: the form's own page offers them
    choices += [
        (value_target(stable_id), result_label(task=task, configuration=short_name or name, value=value, unit=unit))
        for stable_id, value, unit, task, short_name, name in results
    ]
    return choices


#: The values a search on the form's own page lists at most: a few KB, whatever the record holds.
FOUND_VALUES_MAX = 50
FIND_MAX = 100  # characters of a search


@dataclass(frozen=True)
class FormChoices:
    """The options of the form's own page: the record's fields, the value a link chose, and the
    values a search found (at most FOUND_VALUES_MAX of `found`)."""

    choices: list[tuple[str, str]]
    find: str
    found: int


def form_choices(record: Target, *, find: str = "", chosen: str = "") -> FormChoices:
    """What the form's own page offers: the record's own fields; the value `chosen` names when it
    is one of the record's (a value's link, or the one a reader sent); and the values whose task,
    configuration or unit contain every word of `find`, ordered by task then configuration. Never
    every value: a protocol may hold 10,000. Cached a catalogue version."""
    find = " ".join(find.split())[:FIND_MAX]
    key = (
        "correction-choices:"
        + hashlib.sha256(
            f"{version_current().number}\n{target_type_of(record)}:{record.stable_id}\n{find}\n{chosen}".encode()
        ).hexdigest()
    )
    cached = cache.get(key)
    if cached is not None:
        return cached
    choices = page_choices(record, values_up_to=0)
    of_record = _results_of(record)
    found = 0
    if of_record is not None:
        columns, order = VALUE_COLUMNS, VALUE_ORDER
        picked: list[tuple[str, Decimal, str, str, str, str]] = []
        target_type, _, rest = chosen.partition(":")
        chosen_id, _, chosen_field = rest.partition(":")
        if target_type == "result" and chosen_field == "value" and chosen_id:
            picked = list(of_record.filter(stable_id=chosen_id).values_list(*columns))
        if find:
            matching = of_record
            for word in find.split():
                matching = matching.filter(
                    Q(evaluation__dataset__name__icontains=word)
                    | Q(evaluation__configuration__short_name__icontains=word)
                    | Q(evaluation__configuration__name__icontains=word)
                    | Q(unit__icontains=word)
                )
            found = matching.count()
            picked += [
                row
                for row in matching.order_by(*order).values_list(*columns)[:FOUND_VALUES_MAX]
                if not picked or row[0] != picked[0][0]
            ]
        choices += [
            (value_target(stable_id), result_label(task=task, configuration=short_name or name, value=value, unit=unit))
            for stable_id, value, unit, task, short_name, name in picked
        ]
    answer = FormChoices(choices=choices, find=find, found=found)
    cache.set(key, answer, 600)
    return answer


def value_target(result_stable_id: str) -> str:
    """The form's target for a result's value (what a value's "suggest a correction" link chooses)."""
    return f"result:{result_stable_id}:value"


def result_label(*, task: str, configuration: str, value: Decimal, unit: str) -> str:
    """A value as the picker names it: "value of NT-2500M-multi on H3K4me3 (64.70 MCC x 100)"."""
    return f"value of {configuration} on {task} ({display(value)} {unit})"


def page_record_of(target: Target) -> Target:
    """The record whose form offers `target`: a result's protocol (its page lists the value), or the
    record itself."""
    if isinstance(target, Result):
        return target.evaluation.protocol
    return target


def moderation_extras(record: Target | None, field_name: str, proposed_value: str) -> dict[str, object]:
    """What the moderation panel asks beside the decision: a corrected result value's printed form."""
    if not isinstance(record, Result) or field_name != "value":
        return {"asks_printed_value": False}
    quote = {"quote": record.evaluation.quote, "quote_locator": record.evaluation.source_locator}
    try:
        value = clean_text(record._meta.get_field("value"), proposed_value, record)
    except ValidationError:
        return {"asks_printed_value": True, "printed_value_default": record.printed_value, **quote}
    proposed = copy.copy(record)
    proposed.value = value
    return {
        "asks_printed_value": True,
        "printed_value_default": printed_value_after(result=record, value=value),
        # the quote beside the value, and whether it prints the proposed one (applying it otherwise needs a reason)
        "quote_problem": quote_problem_of(proposed, evaluation=record.evaluation),
        **quote,
    }


def printed_value_after(*, result: Result, value: Decimal) -> str:
    """The printed value that goes with a corrected value: the old printed text with its number
    replaced, digits as proposed ("20 min" -> "25 min"), or the value alone when the old text did
    not show the old value."""
    old = exact_text(result.value)
    printed = result.printed_value
    if old and old in printed and printed.count(old) == 1:
        return printed.replace(old, exact_text(value))
    return exact_text(value)
