"""Sources, the vocabularies (areas, contexts), datasets, configurations and protocols."""

from __future__ import annotations

import calendar
import re
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower

from common.history import AuditHistory
from records.models.base import CuratedModel, Direction, SourceKind, _check, _non_empty, api_list_indexes
from records.rules import count_off_unit
from records.rules.units import SCALE_FACTORS, Scale, scale_key, scale_problem, scale_read
from reviews.models import Reviewable

_PARTIAL_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?\Z", re.ASCII)


def validate_partial_date(value: str) -> None:
    """YYYY, YYYY-MM or YYYY-MM-DD, and a real calendar date."""
    match = _PARTIAL_DATE.match(value or "")
    if not match:
        raise ValidationError("Write the date as YYYY, YYYY-MM or YYYY-MM-DD.", code="invalid")
    year, month, day = (int(part) if part else None for part in match.groups())
    if (
        year < 1800
        or (month is not None and not 1 <= month <= 12)
        or (day is not None and not 1 <= day <= calendar.monthrange(year, month)[1])
    ):
        raise ValidationError(f"{value} is not a date in the calendar.", code="invalid")


def normalise_doi(value: str) -> str:
    text = (value or "").strip()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:"):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :]
    return text.lower()


def normalise_arxiv_id(value: str) -> str:
    return (value or "").strip().removeprefix("arXiv:").removeprefix("arxiv:")


class DOIField(models.CharField):
    """A DOI in one spelling (no resolver prefix, lower case: DOIs are case-insensitive), so a
    duplicate is found whichever way it was written."""

    def to_python(self, value):
        return normalise_doi(super().to_python(value))


class ArxivIdField(models.CharField):
    def to_python(self, value):
        return normalise_arxiv_id(super().to_python(value))


def validate_doi(value: str) -> None:
    if value and not re.fullmatch(r"10\.\d{4,9}/\S+", normalise_doi(value), re.ASCII):
        raise ValidationError(
            "A DOI starts with 10. and a registrant code, e.g. 10.1038/s41592-024-02523-z.", code="invalid"
        )


def validate_arxiv_id(value: str) -> None:
    text = normalise_arxiv_id(value)
    if value and not re.fullmatch(r"\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7}", text, re.ASCII):
        raise ValidationError(
            "An arXiv id looks like 2306.15006 (no version: that goes in the arXiv version).", code="invalid"
        )


class Source(CuratedModel):
    page_url_name = "pages:source"
    title = models.CharField(max_length=500)
    venue = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=20, choices=SourceKind.choices, default=SourceKind.PAPER)
    authors_short = models.CharField(
        max_length=200, blank=True, help_text='As cited in labels, e.g. "Dalla-Torre et al. 2025".'
    )
    citation = models.CharField(
        max_length=500, blank=True, help_text='Volume and pages, e.g. "Nature Methods 22, 287-297".'
    )
    published_date = models.CharField(
        max_length=10,
        blank=True,
        validators=[validate_partial_date],
        help_text="First publication (online) date, as precise as known: YYYY, YYYY-MM or YYYY-MM-DD.",
    )
    doi = DOIField(
        max_length=200,
        blank=True,
        verbose_name="DOI",
        validators=[validate_doi],
        help_text="Bare DOI, e.g. 10.1038/s41592-024-02523-z.",
    )
    pmcid = models.CharField(max_length=20, blank=True, verbose_name="PMCID")
    arxiv_id = ArxivIdField(
        max_length=40,
        blank=True,
        verbose_name="arXiv id",
        validators=[validate_arxiv_id],
        help_text="Without version, e.g. 2306.15006.",
    )
    arxiv_version = models.CharField(
        max_length=5,
        blank=True,
        verbose_name="arXiv version read",
        validators=[RegexValidator(r"^v[1-9][0-9]{0,3}\Z", "Write the version as v1, v2, ...")],
    )
    url = models.URLField(max_length=500, blank=True, verbose_name="URL")
    commit = models.CharField(
        max_length=64,
        blank=True,
        help_text="For a repository: the commit read (7 to 64 hex digits).",
        validators=[RegexValidator(r"^[0-9a-f]{7,64}\Z", "A commit is 7 to 64 lowercase hex digits.")],
    )
    copy_consulted = models.CharField(
        max_length=500, blank=True, help_text='Which copy was read, e.g. "full-text XML".'
    )
    work = models.ForeignKey(
        "records.Work",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="versions",
        help_text="The work this source is a version of (preprint version, conference or journal paper, repository at a commit).",
    )
    history = AuditHistory()

    class Meta:
        ordering = ["title", "stable_id"]
        indexes = api_list_indexes("source")
        constraints = [
            _non_empty("stable_id", "source"),
            _non_empty("title", "source"),
            models.UniqueConstraint(
                Lower("doi"),
                condition=~Q(doi=""),
                name="source_doi_unique",
                violation_error_message="Another source has this DOI.",
            ),
            models.UniqueConstraint(
                fields=["arxiv_id", "arxiv_version"],
                condition=~Q(arxiv_id=""),
                name="source_arxiv_version_unique",
                violation_error_message="Another source is this version of this arXiv id.",
            ),
            models.UniqueConstraint(
                fields=["url", "commit"],
                condition=~Q(url=""),
                name="source_url_commit_unique",
                violation_error_message="Another source has this URL (at this commit).",
            ),
            _check(
                Q(arxiv_version="") | ~Q(arxiv_id=""),
                name="source_arxiv_version_has_id",
                field="arxiv_version",
                message="An arXiv version needs its arXiv id.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.venue})" if self.venue else self.title

    def clean(self) -> None:
        """A duplicate of another source (the same DOI; the same arXiv id, URL or a near-identical
        title in another work) names the record it duplicates (records.works.source_duplicates)."""
        super().clean()
        from records.works import source_duplicates  # the rule reads other sources and works

        errors = source_duplicates(source=self)
        if errors:
            raise ValidationError(errors)

    @property
    def full_citation(self) -> str:
        """The citation line of the seed page: citation, online date, PMCID and the copy consulted."""
        text = self.citation
        if self.published_date:
            text += (
                f" (published online {self.published_date})"
                if len(self.published_date) == 10
                else f" ({self.published_date})"
            )
        arxiv = f"arXiv:{self.arxiv_id}{self.arxiv_version}" if self.arxiv_id else ""
        tail = " ".join(part for part in (self.pmcid, arxiv, self.copy_consulted) if part)
        return f"{text}; {tail}" if tail else text


class Area(CuratedModel):
    label = models.CharField(max_length=200)
    history = AuditHistory()

    class Meta:
        ordering = ["stable_id"]
        constraints = [_non_empty("stable_id", "area")]

    def __str__(self) -> str:
        return self.stable_id


class Context(CuratedModel):
    label = models.CharField(max_length=200)
    history = AuditHistory()

    class Meta:
        ordering = ["stable_id"]
        constraints = [_non_empty("stable_id", "context")]

    def __str__(self) -> str:
        return self.stable_id


class Dataset(CuratedModel):
    """A dataset; a suite ("NT benchmark, all 18 tasks") has its tasks as child datasets."""

    page_url_name = "pages:dataset"
    page_priority = 0.7
    name_fields = ("name", "task_key")
    name = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    suite = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="tasks")
    task_key = models.CharField(max_length=100, blank=True, help_text="The task's name inside its suite.")
    position = models.PositiveSmallIntegerField(default=0, help_text="Order of the task inside its suite.")
    train_size = models.PositiveIntegerField(null=True, blank=True)
    test_size = models.PositiveIntegerField(null=True, blank=True)
    num_classes = models.PositiveSmallIntegerField(null=True, blank=True)
    sequence_length_bp = models.PositiveIntegerField(null=True, blank=True, verbose_name="sequence length (bp)")
    metric = models.CharField(max_length=100, blank=True)
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.PROTECT, related_name="datasets")
    source_locator = models.CharField(max_length=500, blank=True)
    history = AuditHistory()

    class Meta:
        ordering = ["suite_id", "position", "name"]
        indexes = api_list_indexes("dataset")
        constraints = [
            _non_empty("stable_id", "dataset"),
            _non_empty("name", "dataset"),
            _check(
                Q(num_classes__isnull=True) | Q(num_classes__gte=2),
                name="dataset_classes_at_least_two",
                field="num_classes",
                message="A task has at least two classes.",
            ),
            _check(
                Q(sequence_length_bp__isnull=True) | Q(sequence_length_bp__gte=1),
                name="dataset_length_positive",
                field="sequence_length_bp",
                message="The sequence length must be at least 1 bp.",
            ),
            _check(
                ~Q(suite=F("id")),
                name="dataset_not_own_suite",
                field="suite",
                message="A dataset cannot be its own suite.",
            ),
            models.UniqueConstraint(
                fields=["suite", "task_key"], condition=~Q(task_key=""), name="dataset_task_key_unique_in_suite"
            ),
        ]


class Configuration(CuratedModel):
    """A tested model or method: the model (records.models.identity.GenomicModel) and how it was tested."""

    page_url_name = "pages:configuration"
    page_priority = 0.5
    name = models.CharField(max_length=300)
    short_name = models.CharField(max_length=200, blank=True)
    family = models.CharField(max_length=200, blank=True)
    parameter_count = models.BigIntegerField(null=True, blank=True, help_text="Nominal number of parameters.")
    method = models.CharField(max_length=200, blank=True, help_text='e.g. "IA3 fine-tuning".')
    description = models.TextField(blank=True)
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.PROTECT, related_name="configurations")
    model = models.ForeignKey(
        "records.GenomicModel",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="configurations",
        help_text="The model tested (a configuration is a model plus how it was tested); an import matches it by alias.",
    )
    history = AuditHistory()

    class Meta:
        ordering = ["name", "stable_id"]
        indexes = api_list_indexes("configuration")
        constraints = [
            _non_empty("stable_id", "configuration"),
            _non_empty("name", "configuration"),
            _check(
                Q(parameter_count__isnull=True) | Q(parameter_count__gte=1),
                name="configuration_parameters_positive",
                field="parameter_count",
                message="The parameter count must be at least 1.",
            ),
        ]


class BestMarking(models.TextChoices):
    BEST = "best", "the source marks its best values"
    NONE = "none", "the source marks no best"
    OTHER = "other", "the source's marks mean something else than best"
    UNSEEN = "unseen", "the stored copy does not show the source's marks"


#: What a page says beside its best marks, by how the protocol's source marks its own.
BEST_MARKING_SENTENCES = {
    BestMarking.BEST: "The source marks its best values; the marks here are the portal's, by the rule below.",
    BestMarking.NONE: "The source marks no best: the marks here are the portal's, by the protocol's direction and the rule below.",
    BestMarking.OTHER: "The source's marks mean something else than best: the marks here are the portal's, by the rule below.",
    BestMarking.UNSEEN: "The stored copy of the source does not show its marks: the marks here are the portal's, by the rule below.",
}


class Protocol(CuratedModel, Reviewable):
    page_url_name = "pages:protocol"
    page_priority = 0.9
    title = models.CharField(max_length=500)
    summary = models.TextField()
    procedure = models.TextField(blank=True)
    version_label = models.CharField(max_length=200, blank=True)
    metric_name = models.CharField(max_length=100, help_text='e.g. "Runtime".')
    metric_short_name = models.SlugField(max_length=100, help_text='e.g. "runtime".')
    metric_description = models.CharField(
        max_length=300, blank=True, help_text='e.g. "Mean wall time per IA3 fine-tuning run".'
    )
    metric_unit = models.CharField(
        max_length=50, help_text='Every result of the protocol is in this unit, e.g. "minute".'
    )
    metric_scale = models.CharField(
        max_length=10,
        choices=Scale.choices,
        blank=True,
        default="",
        db_default="",  # rows written by code that predates the column (an older migration's data step)
        help_text=(
            "How the values are printed, so that one metric on different scales compares: blank reads it from "
            'the unit\'s words ("MCC x 100": x 100; "accuracy (%)": percent; "MCC": the plain scale; "minute": raw units).'
        ),
    )
    metric_direction = models.CharField(
        max_length=10,
        choices=Direction.choices,
        help_text="Which way is better; none for descriptive facts, which are never ranked.",
    )
    best_marking = models.CharField(
        max_length=10,
        choices=BestMarking.choices,
        blank=True,
        default="",
        db_default="",
        help_text=(
            "Whether the source marks a best value (bold, a star); blank when not recorded. The pages say so beside "
            "the portal's own best marks."
        ),
    )
    datasets = models.ManyToManyField(Dataset, blank=True, related_name="protocols")
    areas = models.ManyToManyField(Area, blank=True, related_name="protocols")
    contexts = models.ManyToManyField(Context, blank=True, related_name="protocols")
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="protocols")
    source_locator = models.CharField(max_length=500, blank=True)
    explanatory_profile = models.TextField(blank=True)
    explanatory_profile_reviewed = models.BooleanField(default=False)
    history = AuditHistory(m2m_fields=[datasets, areas, contexts])

    class Meta:
        ordering = ["title", "stable_id"]
        indexes = api_list_indexes("protocol")
        constraints = [
            _non_empty("stable_id", "protocol"),
            _non_empty("title", "protocol"),
            _non_empty("metric_unit", "protocol"),
            _check(
                Q(metric_scale__in=Scale.values),
                name="protocol_scale_valid",
                field="metric_scale",
                message="Use fraction, percent, x100, per_mille or raw.",
            ),
            _check(
                Q(metric_direction__in=Direction.values),
                name="protocol_direction_valid",
                field="metric_direction",
                message="Use lower, higher or none.",
            ),
        ]

    def clean(self) -> None:
        """The unit rule (records.rules) as a form error rather than the trigger's refusal
        (records.db_triggers), and the scale read from the unit's words or checked against them."""
        super().clean()
        self.scale_fill()
        problem = scale_problem(unit=self.metric_unit, scale=self.metric_scale, metric_names=self.metric_names)
        if problem:
            raise ValidationError({"metric_unit" if "scale word" in problem else "metric_scale": problem})
        if self.pk is not None:
            from records.models.results import Result  # defined after protocols, which it refers to

            others = count_off_unit(Result.objects.filter(evaluation__protocol=self), metric_unit=self.metric_unit)
            if others:
                raise ValidationError(
                    {"metric_unit": f"{others} result(s) of this protocol are in another unit; change them first"}
                )

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.scale_fill()
        super().save(*args, **kwargs)

    def scale_fill(self) -> None:
        """A blank scale is the one the unit's words state (records.rules.units.scale_read)."""
        if not isinstance(self.metric_scale, str) or not self.metric_scale:  # blank, or the column's default
            self.metric_scale = scale_read(unit=self.metric_unit, metric_names=self.metric_names).scale

    @property
    def best_marking_sentence(self) -> str:
        return BEST_MARKING_SENTENCES.get(self.best_marking, "")

    @property
    def metric_names(self) -> tuple[str, str]:
        return (self.metric_name, self.metric_short_name)

    @property
    def scale_factor(self) -> Decimal:
        """What a value is divided by to be on the metric's plain scale."""
        return SCALE_FACTORS[self.metric_scale or Scale.RAW]

    @property
    def comparison_key(self) -> tuple[str, str]:
        """What protocols share whose values compare (records.rules.units.scale_key)."""
        return scale_key(
            metric=self.metric_short_name,
            scale=self.metric_scale,
            unit=self.metric_unit,
            metric_names=self.metric_names,
        )

    @property
    def is_ranked(self) -> bool:
        return self.metric_direction != Direction.NONE

    @property
    def metric_label(self) -> str:
        """'Runtime (Mean wall time per IA3 fine-tuning run)', as the seed page heads its column."""
        return f"{self.metric_name} ({self.metric_description})" if self.metric_description else self.metric_name


class Limitation(models.Model):
    protocol = models.ForeignKey(Protocol, on_delete=models.CASCADE, related_name="limitations")
    position = models.PositiveSmallIntegerField()
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = AuditHistory()

    class Meta:
        ordering = ["protocol_id", "position"]
        indexes = [models.Index(fields=["updated_at"], name="rec_limitation_updated")]
        constraints = [
            models.UniqueConstraint(fields=["protocol", "position"], name="limitation_position_unique"),
            _non_empty("text", "limitation"),
        ]

    def __str__(self) -> str:
        return self.text
