"""The catalogue's vocabulary of choices and the base of every curated model (stable id, timestamps, page).

`_check` names a constraint's field in its violation code, so forms and the API can say which field
a database refusal is about (records.services.errors_by_field).
"""

from __future__ import annotations

import functools
from typing import ClassVar

from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.urls import reverse

from common.text import name_canonical, name_lookalike_error


class Direction(models.TextChoices):
    LOWER = "lower", "lower is better"
    HIGHER = "higher", "higher is better"
    NONE = "none", "descriptive: not ranked"


class SourceKind(models.TextChoices):
    PAPER = "paper", "Paper"
    PREPRINT = "preprint", "Preprint"
    DATASET_CARD = "dataset_card", "Dataset card"
    MODEL_CARD = "model_card", "Model card"
    LEADERBOARD = "leaderboard", "Leaderboard"
    REPOSITORY = "repository", "Repository"
    WEB_PAGE = "web_page", "Web page"


class MeasuredBy(models.TextChoices):
    """Who ran the measurement (the source that reports it is `Evaluation.source`)."""

    AUTHORS = "authors", "The model's authors"
    THIRD_PARTY = "third_party", "A third party"
    PORTAL = "portal", "This portal"


class ReadingMethod(models.TextChoices):
    """How the curator read the value off its source."""

    TEXT = "text", "Read from the text"
    TABLE = "table", "Read from a table"
    FIGURE_LABEL = "figure_label", "Read from a figure's label"
    DIGITISED_PLOT = "digitised_plot", "Digitised from a plot"
    JOB_REPORT = "job_report", "The portal's job report"


class UncertaintyKind(models.TextChoices):
    SD = "sd", "standard deviation"
    SE = "se", "standard error"
    CI = "ci", "confidence interval"
    RANGE = "range", "range"


class Relation(models.TextChoices):
    ABSOLUTE = "absolute", "absolute"
    RATIO = "ratio", "ratio to a reference"
    DIFFERENCE = "difference", "difference from a reference"


class EvidenceSupport(models.TextChoices):
    VERIFIES_FIELD = "verifies_field", "Verifies a field"
    CONTEXT_ONLY = "context_only", "Context only"


class BaselineKind(models.TextChoices):
    NULL_CONTROL = "null_control", "Null control"
    CONVENTIONAL_REFERENCE = "conventional_reference", "Conventional reference"


class BaselineStatus(models.TextChoices):
    PROPOSED = "proposed", "Proposed control: requires review"
    SELECTED = "selected", "Selected control"
    RETIRED = "retired", "Retired"


def _check(condition, *, name: str, field: str, message: str) -> models.CheckConstraint:
    """A check constraint whose violation names its field (the code), so forms and the API can say which."""
    return models.CheckConstraint(
        condition=condition, name=name, violation_error_code=field, violation_error_message=message
    )


def _non_empty(field: str, model: str) -> models.CheckConstraint:
    return _check(
        ~Q(**{field: ""}), name=f"{model}_{field}_not_empty", field=field, message="This field cannot be empty."
    )


@functools.cache
def _url_parts(url_name: str) -> tuple[str, str]:
    """The address of a record page around its stable id, reversed once per process (pages link hundreds)."""
    placeholder = "stable-id-placeholder"
    return tuple(reverse(url_name, args=[placeholder]).split(placeholder, 1))


def api_list_indexes(name: str) -> list[models.Index]:
    """What the API's lists read: newest first by creation (their cursor order) and, for
    Last-Modified, the newest update of the table."""
    return [
        models.Index(fields=["-created_at", "-id"], name=f"rec_{name}_created"),
        models.Index(fields=["updated_at"], name=f"rec_{name}_updated"),
    ]


class CuratedModel(models.Model):
    # The record's public page (a URL name taking the stable id), or "" when it has none: a kind
    # with a page is a public record kind (public_record_kinds), and its pages are in the sitemap
    # with this priority.
    page_url_name = ""
    page_priority = 0.4

    stable_id = models.SlugField(
        max_length=150,
        unique=True,
        help_text="Permanent identifier (letters, digits, hyphens); never changes once published.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    #: Names readers match by eye: stored in NFKC, refused when they mix lookalike letters of two
    #: scripts (common.text.name_canonical, name_lookalike_error), on every way in that validates.
    name_fields: ClassVar[tuple[str, ...]] = ()

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return getattr(self, "title", None) or getattr(self, "name", None) or self.stable_id

    def get_absolute_url(self) -> str:
        prefix, suffix = _url_parts(self.page_url_name)
        return f"{prefix}{self.stable_id}{suffix}"

    def clean_fields(self, exclude=None) -> None:
        errors: dict[str, list[str]] = {}
        for field in self.name_fields:
            value = getattr(self, field)
            if not isinstance(value, str) or (exclude and field in exclude):
                continue
            setattr(self, field, name_canonical(value))
            refused = name_lookalike_error(getattr(self, field))
            if refused:
                errors[field] = [refused]
        try:
            super().clean_fields(exclude=exclude)
        except ValidationError as invalid:
            errors = {**invalid.message_dict, **errors}
        if errors:
            raise ValidationError(errors)


def public_record_kinds() -> list[type[CuratedModel]]:
    """The record kinds with a public page, in the order their models are declared: the one list
    that the sitemap and the record pages (tests/pages/test_record_pages.py) read, rather than lists of their own."""
    return [
        model
        for model in apps.get_app_config("records").get_models()
        if issubclass(model, CuratedModel) and model.page_url_name
    ]
