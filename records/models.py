"""The catalogue of benchmark evidence (DESIGN.md, "Catalogue").

Plain models: no business logic in save() or signals; writes go through records.services. Every
curated model has a stable id, timestamps and django-simple-history. What must always hold is a
database constraint (and, where one table cannot see another, a trigger: see migration 0002).
"""

from __future__ import annotations

import calendar
import functools
import re
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, FloatField, Q
from django.db.models.functions import Cast, Lower
from django.db.models.lookups import GreaterThanOrEqual, LessThanOrEqual
from django.urls import reverse
from simple_history.models import HistoricalRecords

from records.fields import ExactDecimalField
from records.values import display, exact_text, printed_spread, printed_value_problem
from reviews.models import Reviewable, ReviewState


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
    return models.CheckConstraint(condition=condition, name=name, violation_error_code=field, violation_error_message=message)


def _non_empty(field: str, model: str) -> models.CheckConstraint:
    return _check(~Q(**{field: ""}), name=f"{model}_{field}_not_empty", field=field, message="This field cannot be empty.")


@functools.cache
def _url_parts(url_name: str) -> tuple[str, str]:
    """The address of a record page around its stable id, reversed once per process (pages link hundreds)."""
    placeholder = "stable-id-placeholder"
    return tuple(reverse(url_name, args=[placeholder]).split(placeholder, 1))


class CuratedModel(models.Model):
    # The record's public page (a URL name taking the stable id), or "" when it has none.
    page_url_name = ""

    stable_id = models.SlugField(
        max_length=150,
        unique=True,
        help_text="Permanent identifier (letters, digits, hyphens); never changes once published.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return getattr(self, "title", None) or getattr(self, "name", None) or self.stable_id

    def get_absolute_url(self) -> str:
        prefix, suffix = _url_parts(self.page_url_name)
        return f"{prefix}{self.stable_id}{suffix}"


_PARTIAL_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?\Z", re.ASCII)


def validate_partial_date(value: str) -> None:
    """YYYY, YYYY-MM or YYYY-MM-DD, and a real calendar date."""
    match = _PARTIAL_DATE.match(value or "")
    if not match:
        raise ValidationError("Write the date as YYYY, YYYY-MM or YYYY-MM-DD.", code="invalid")
    year, month, day = (int(part) if part else None for part in match.groups())
    if year < 1800 or (month is not None and not 1 <= month <= 12) or (
        day is not None and not 1 <= day <= calendar.monthrange(year, month)[1]
    ):
        raise ValidationError(f"{value} is not a date in the calendar.", code="invalid")


def normalise_doi(value: str) -> str:
    text = (value or "").strip()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:"):
        if text.lower().startswith(prefix):
            text = text[len(prefix):]
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
        raise ValidationError("A DOI starts with 10. and a registrant code, e.g. 10.1038/s41592-024-02523-z.", code="invalid")


def validate_arxiv_id(value: str) -> None:
    text = normalise_arxiv_id(value)
    if value and not re.fullmatch(r"\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7}", text, re.ASCII):
        raise ValidationError("An arXiv id looks like 2306.15006 (no version: that goes in the arXiv version).", code="invalid")


class Source(CuratedModel):
    page_url_name = "records:source"
    title = models.CharField(max_length=500)
    venue = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=20, choices=SourceKind.choices, default=SourceKind.PAPER)
    authors_short = models.CharField(max_length=200, blank=True, help_text='As cited in labels, e.g. "Dalla-Torre et al. 2025".')
    citation = models.CharField(max_length=500, blank=True, help_text='Volume and pages, e.g. "Nature Methods 22, 287-297".')
    published_date = models.CharField(
        max_length=10, blank=True, validators=[validate_partial_date],
        help_text="First publication (online) date, as precise as known: YYYY, YYYY-MM or YYYY-MM-DD.",
    )
    doi = DOIField(max_length=200, blank=True, verbose_name="DOI", validators=[validate_doi], help_text="Bare DOI, e.g. 10.1038/s41592-024-02523-z.")
    pmcid = models.CharField(max_length=20, blank=True, verbose_name="PMCID")
    arxiv_id = ArxivIdField(
        max_length=40, blank=True, verbose_name="arXiv id", validators=[validate_arxiv_id], help_text="Without version, e.g. 2306.15006."
    )
    arxiv_version = models.CharField(
        max_length=5, blank=True, verbose_name="arXiv version read",
        validators=[RegexValidator(r"^v[1-9][0-9]{0,3}\Z", "Write the version as v1, v2, ...")],
    )
    url = models.URLField(max_length=500, blank=True, verbose_name="URL")
    commit = models.CharField(
        max_length=64, blank=True, help_text="For a repository: the commit read (7 to 64 hex digits).",
        validators=[RegexValidator(r"^[0-9a-f]{7,64}\Z", "A commit is 7 to 64 lowercase hex digits.")],
    )
    copy_consulted = models.CharField(max_length=500, blank=True, help_text='Which copy was read, e.g. "full-text XML".')
    history = HistoricalRecords()

    # Identifiers that name one work: a second source with the same one is a duplicate.
    IDENTIFIERS = ("doi", "arxiv_id", "url")

    class Meta:
        ordering = ["title", "stable_id"]
        constraints = [
            _non_empty("stable_id", "source"),
            _non_empty("title", "source"),
            models.UniqueConstraint(
                Lower("doi"), condition=~Q(doi=""), name="source_doi_unique",
                violation_error_message="Another source has this DOI.",
            ),
            models.UniqueConstraint(
                fields=["arxiv_id"], condition=~Q(arxiv_id=""), name="source_arxiv_id_unique",
                violation_error_message="Another source has this arXiv id.",
            ),
            models.UniqueConstraint(
                fields=["url"], condition=~Q(url=""), name="source_url_unique",
                violation_error_message="Another source has this URL.",
            ),
            _check(Q(arxiv_version="") | ~Q(arxiv_id=""), name="source_arxiv_version_has_id", field="arxiv_version", message="An arXiv version needs its arXiv id."),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.venue})" if self.venue else self.title

    def clean(self) -> None:
        """One source per DOI, arXiv id or URL (each in one spelling: see DOIField and ArxivIdField):
        a second one names the record that has it."""
        super().clean()
        errors = {}
        for name in self.IDENTIFIERS:
            value = getattr(self, name)
            if not value:
                continue
            lookup = {f"{name}__iexact": value} if name == "doi" else {name: value}
            other = Source.objects.filter(**lookup).exclude(pk=self.pk).values_list("stable_id", flat=True).first()
            if other is not None:
                label = self._meta.get_field(name).verbose_name
                errors[name] = f"source {other!r} already has this {label}: use it instead of creating a duplicate"
        if errors:
            raise ValidationError(errors)

    @property
    def full_citation(self) -> str:
        """The citation line of the seed page: citation, online date, PMCID and the copy consulted."""
        text = self.citation
        if self.published_date:
            text += f" (published online {self.published_date})" if len(self.published_date) == 10 else f" ({self.published_date})"
        arxiv = f"arXiv:{self.arxiv_id}{self.arxiv_version}" if self.arxiv_id else ""
        tail = " ".join(part for part in (self.pmcid, arxiv, self.copy_consulted) if part)
        return f"{text}; {tail}" if tail else text


class Area(CuratedModel):
    label = models.CharField(max_length=200)
    history = HistoricalRecords()

    class Meta:
        ordering = ["stable_id"]
        constraints = [_non_empty("stable_id", "area")]

    def __str__(self) -> str:
        return self.stable_id


class Context(CuratedModel):
    label = models.CharField(max_length=200)
    history = HistoricalRecords()

    class Meta:
        ordering = ["stable_id"]
        constraints = [_non_empty("stable_id", "context")]

    def __str__(self) -> str:
        return self.stable_id


class Dataset(CuratedModel):
    """A dataset; a suite ("NT benchmark, all 18 tasks") has its tasks as child datasets."""

    page_url_name = "records:dataset"
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
    history = HistoricalRecords()

    class Meta:
        ordering = ["suite_id", "position", "name"]
        constraints = [
            _non_empty("stable_id", "dataset"),
            _non_empty("name", "dataset"),
            _check(Q(num_classes__isnull=True) | Q(num_classes__gte=2), name="dataset_classes_at_least_two", field="num_classes", message="A task has at least two classes."),
            _check(Q(sequence_length_bp__isnull=True) | Q(sequence_length_bp__gte=1), name="dataset_length_positive", field="sequence_length_bp", message="The sequence length must be at least 1 bp."),
            _check(~Q(suite=F("id")), name="dataset_not_own_suite", field="suite", message="A dataset cannot be its own suite."),
            models.UniqueConstraint(fields=["suite", "task_key"], condition=~Q(task_key=""), name="dataset_task_key_unique_in_suite"),
        ]


class Configuration(CuratedModel):
    """A tested model or method."""

    page_url_name = "records:configuration"
    name = models.CharField(max_length=300)
    short_name = models.CharField(max_length=200, blank=True)
    family = models.CharField(max_length=200, blank=True)
    parameter_count = models.BigIntegerField(null=True, blank=True, help_text="Nominal number of parameters.")
    method = models.CharField(max_length=200, blank=True, help_text='e.g. "IA3 fine-tuning".')
    description = models.TextField(blank=True)
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.PROTECT, related_name="configurations")
    history = HistoricalRecords()

    class Meta:
        ordering = ["name", "stable_id"]
        constraints = [
            _non_empty("stable_id", "configuration"),
            _non_empty("name", "configuration"),
            _check(Q(parameter_count__isnull=True) | Q(parameter_count__gte=1), name="configuration_parameters_positive", field="parameter_count", message="The parameter count must be at least 1."),
        ]


class Protocol(CuratedModel, Reviewable):
    page_url_name = "records:protocol"
    title = models.CharField(max_length=500)
    summary = models.TextField()
    procedure = models.TextField(blank=True)
    version_label = models.CharField(max_length=200, blank=True)
    metric_name = models.CharField(max_length=100, help_text='e.g. "Runtime".')
    metric_short_name = models.SlugField(max_length=100, help_text='e.g. "runtime".')
    metric_description = models.CharField(max_length=300, blank=True, help_text='e.g. "Mean wall time per IA3 fine-tuning run".')
    metric_unit = models.CharField(max_length=50, help_text='Every result of the protocol is in this unit, e.g. "minute".')
    metric_direction = models.CharField(
        max_length=10, choices=Direction.choices, help_text="Which way is better; none for descriptive facts, which are never ranked."
    )
    datasets = models.ManyToManyField(Dataset, blank=True, related_name="protocols")
    areas = models.ManyToManyField(Area, blank=True, related_name="protocols")
    contexts = models.ManyToManyField(Context, blank=True, related_name="protocols")
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="protocols")
    source_locator = models.CharField(max_length=500, blank=True)
    explanatory_profile = models.TextField(blank=True)
    explanatory_profile_reviewed = models.BooleanField(default=False)
    history = HistoricalRecords(m2m_fields=[datasets, areas, contexts])

    class Meta:
        ordering = ["title", "stable_id"]
        constraints = [
            _non_empty("stable_id", "protocol"),
            _non_empty("title", "protocol"),
            _non_empty("metric_unit", "protocol"),
            _check(Q(metric_direction__in=Direction.values), name="protocol_direction_valid", field="metric_direction", message="Use lower, higher or none."),
        ]

    def clean(self) -> None:
        """The unit rule (see records.db_triggers) as a form error rather than the trigger's refusal."""
        super().clean()
        if self.pk is not None:
            others = Result.objects.filter(evaluation__protocol=self).exclude(unit=self.metric_unit).count()
            if others:
                raise ValidationError({"metric_unit": f"{others} result(s) of this protocol are in another unit; change them first"})

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
    history = HistoricalRecords()

    class Meta:
        ordering = ["protocol_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["protocol", "position"], name="limitation_position_unique"),
            _non_empty("text", "limitation"),
        ]

    def __str__(self) -> str:
        return self.text


class Evaluation(CuratedModel, Reviewable):
    """One measurement of a configuration on a dataset or task under a protocol, as one source reports it.

    Provenance has three parts: the source that reports it (`source`), the party that measured it
    (`measured_by`, `measured_by_name`), and how the curator read it (`reading_method`). A source
    that only copies another's number `repeats` that evaluation: the same measurement reported again,
    counted once in comparisons and never as a replication.
    """

    page_url_name = "records:evaluation"
    title = models.CharField(max_length=500)
    protocol = models.ForeignKey(Protocol, on_delete=models.PROTECT, related_name="evaluations")
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="evaluations")
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="evaluations", help_text="The dataset or task it was measured on.")
    measured_by = models.CharField(max_length=20, choices=MeasuredBy.choices, help_text="Who ran the measurement.")
    measured_by_name = models.CharField(
        max_length=300, blank=True, help_text='Who the third party is, e.g. "Zhou et al. 2024 (DNABERT-2 authors)"; required for a third party.'
    )
    repeats = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="repeated_by",
        help_text="The evaluation whose measurement this source reports again (a copy, not a replication).",
    )
    reading_method = models.CharField(max_length=20, choices=ReadingMethod.choices, help_text="How the value was read off its source.")
    setup = models.TextField(blank=True, verbose_name="evaluation setup")
    aggregation = models.TextField(blank=True, help_text="Blank when the source does not report it.")
    uncertainty = models.TextField(
        blank=True, verbose_name="uncertainty note",
        help_text="The source's words on uncertainty; blank when it reports none. The numbers are on each result.",
    )
    coverage_scored = models.PositiveIntegerField(null=True, blank=True, help_text="Blank when not reported.")
    coverage_eligible = models.PositiveIntegerField(null=True, blank=True, help_text="Blank when not reported.")
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.PROTECT, related_name="evaluations", help_text="The source that reports it.")
    source_locator = models.CharField(max_length=500, blank=True)
    quote = models.TextField(blank=True, help_text="The source's words, verbatim.")
    concern_source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    concern_locator = models.CharField(max_length=500, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["configuration__name", "stable_id"]
        constraints = [
            _non_empty("stable_id", "evaluation"),
            _non_empty("title", "evaluation"),
            _check(Q(measured_by__in=MeasuredBy.values), name="evaluation_measured_by_valid", field="measured_by", message="Unknown measuring party."),
            _check(
                ~Q(measured_by=MeasuredBy.THIRD_PARTY) | ~Q(measured_by_name=""),
                name="evaluation_third_party_named", field="measured_by_name", message="Name the third party that measured it.",
            ),
            _check(Q(reading_method__in=ReadingMethod.values), name="evaluation_reading_method_valid", field="reading_method", message="Unknown reading method."),
            # The portal's own runs are read from their job report, and only they are.
            _check(
                Q(measured_by=MeasuredBy.PORTAL, reading_method=ReadingMethod.JOB_REPORT)
                | (~Q(measured_by=MeasuredBy.PORTAL) & ~Q(reading_method=ReadingMethod.JOB_REPORT)),
                name="evaluation_job_report_iff_portal", field="reading_method",
                message="Only the portal's own measurements are read from a job report, and they always are.",
            ),
            _check(~Q(repeats=F("id")), name="evaluation_not_own_repeat", field="repeats", message="An evaluation cannot repeat itself."),
            _check(
                Q(coverage_scored__isnull=True) | Q(coverage_eligible__isnull=True) | Q(coverage_scored__lte=F("coverage_eligible")),
                name="evaluation_coverage_scored_le_eligible",
                field="coverage_scored",
                message="More items scored than eligible.",
            ),
            # Only the portal's own measurements may lack a literature source.
            _check(
                Q(measured_by=MeasuredBy.PORTAL) | Q(source__isnull=False),
                name="evaluation_reported_has_source",
                field="source",
                message="A reported evaluation needs its source (only the portal's own measurements have none).",
            ),
        ]

    def clean(self) -> None:
        """Moving an evaluation to another protocol must keep its results in that protocol's unit; a
        repeat names the original measurement of the same thing, reported by another source."""
        super().clean()
        protocol = getattr(self, "protocol", None)
        if self.pk is not None and protocol is not None:
            others = self.results.exclude(unit=protocol.metric_unit).count()
            if others:
                raise ValidationError({"protocol": f"{others} result(s) of this evaluation are not in {protocol.metric_unit!r}, this protocol's unit"})
        if self.pk is not None:
            moved = self.repeated_by.exclude(protocol_id=self.protocol_id, configuration_id=self.configuration_id, dataset_id=self.dataset_id)
            if moved.exists() or (self.repeats_id and self.repeated_by.exists()):
                raise ValidationError({"repeats" if self.repeats_id else "protocol": (
                    f"{self.repeated_by.count()} evaluation(s) repeat this one: they must keep its protocol, configuration and "
                    "dataset, and an original repeats nothing; change or unlink them first"
                )})
        original = self.repeats if self.repeats_id else None
        if original is not None:
            problem = ""
            if original.repeats_id:
                problem = f"{original.stable_id} repeats {original.repeats.stable_id} itself: point to the original measurement"
            elif (original.protocol_id, original.configuration_id, original.dataset_id) != (self.protocol_id, self.configuration_id, self.dataset_id):
                problem = "the repeated evaluation must have the same protocol, configuration and dataset"
            elif original.measured_by != self.measured_by:
                problem = f"the same measurement has the same measuring party ({original.get_measured_by_display().lower()})"
            elif self.source_id is not None and original.source_id == self.source_id:
                problem = "a repeat is the same measurement reported by another source; this one has the same source"
            if problem:
                raise ValidationError({"repeats": problem})

    @property
    def results_with_uncertainty(self) -> list[Result]:
        return [result for result in self.results.all() if result.uncertainty_kind]

    @property
    def is_comparable(self) -> bool:
        return evaluation_comparable(
            review_state=self.review_state, original_state=self.repeats.review_state if self.repeats_id is not None else None
        )



def evaluation_comparable(*, review_state: str, original_state: str | None) -> bool:
    """Whether an evaluation enters comparisons: source checked, and, when it repeats another
    source's measurement, only while that original is unchecked. A checked original is compared
    itself (the measurement counts once); an excluded one keeps its copies out too (the exclusion
    is the measurement's). The API's filter (`comparable_q`), the release and the pages use this rule."""
    return review_state == ReviewState.SOURCE_CHECKED and original_state in (None, ReviewState.PROPOSED)


def comparable_q(prefix: str = "") -> Q:
    """`evaluation_comparable` as a query condition on evaluations (or on `<prefix>` evaluations)."""
    return Q(**{f"{prefix}review_state": ReviewState.SOURCE_CHECKED}) & (
        Q(**{f"{prefix}repeats__isnull": True}) | Q(**{f"{prefix}repeats__review_state": ReviewState.PROPOSED})
    )


class Result(CuratedModel):
    """One metric row of an evaluation, in its protocol's unit (a trigger keeps them equal).

    The value is exact with its printed precision (records.values); `printed_value` is the source's
    text and must show that number. Uncertainty is structured: a kind, and either the printed ±
    figure (`uncertainty_value`) or bounds. A relative result (a ratio or difference to a named
    reference configuration) is compared only with results relative to the same reference.
    """

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="results")
    value = ExactDecimalField(help_text="The number as printed, with its precision: 0.410, 66.47, 300E9, 3E-12.")
    unit = models.CharField(max_length=50)
    printed_value = models.CharField(max_length=200, help_text='As the source prints it, e.g. "20 min", "0.410", "74.32±0.89", "300B".')
    uncertainty_kind = models.CharField(max_length=10, blank=True, choices=UncertaintyKind.choices, help_text="Blank when the source reports none.")
    uncertainty_value = ExactDecimalField(null=True, blank=True, help_text="The printed ± figure (for s.d., s.e., or a ± range).")
    lower_bound = ExactDecimalField(null=True, blank=True)
    upper_bound = ExactDecimalField(null=True, blank=True)
    uncertainty_level = ExactDecimalField(null=True, blank=True, help_text="A confidence interval's level in percent, e.g. 95.")
    num_runs = models.PositiveIntegerField(null=True, blank=True, help_text="n: runs, seeds or folds behind the value; blank when not reported.")
    relation = models.CharField(max_length=10, choices=Relation.choices, default=Relation.ABSOLUTE)
    reference_configuration = models.ForeignKey(
        Configuration, null=True, blank=True, on_delete=models.PROTECT, related_name="relative_results",
        help_text="For a ratio or difference: the configuration it is relative to.",
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["evaluation_id", "stable_id"]
        constraints = [
            _non_empty("stable_id", "result"),
            _non_empty("unit", "result"),
            _non_empty("printed_value", "result"),
            _check(Q(num_runs__isnull=True) | Q(num_runs__gte=1), name="result_runs_positive", field="num_runs", message="The number of runs is at least 1."),
            _check(
                Q(lower_bound__isnull=True) | LessThanOrEqual(Cast("lower_bound", FloatField()), Cast("value", FloatField())),
                name="result_lower_bound_le_value", field="lower_bound", message="The lower bound cannot exceed the value.",
            ),
            _check(
                Q(upper_bound__isnull=True) | GreaterThanOrEqual(Cast("upper_bound", FloatField()), Cast("value", FloatField())),
                name="result_upper_bound_ge_value", field="upper_bound", message="The upper bound cannot be below the value.",
            ),
            _check(
                Q(uncertainty_kind__in=["", *UncertaintyKind.values]),
                name="result_uncertainty_kind_valid", field="uncertainty_kind", message="Unknown kind of uncertainty.",
            ),
            _check(
                ~Q(uncertainty_kind="") | Q(uncertainty_value__isnull=True, lower_bound__isnull=True, upper_bound__isnull=True, uncertainty_level__isnull=True),
                name="result_uncertainty_has_kind", field="uncertainty_kind",
                message="Say what kind of uncertainty the figures are (s.d., s.e., CI or range).",
            ),
            _check(
                Q(uncertainty_kind="") | Q(uncertainty_value__isnull=False) | Q(lower_bound__isnull=False) | Q(upper_bound__isnull=False),
                name="result_uncertainty_has_figures", field="uncertainty_value",
                message="An uncertainty needs its printed ± figure or a bound.",
            ),
            _check(
                Q(uncertainty_value__isnull=True) | GreaterThanOrEqual(Cast("uncertainty_value", FloatField()), 0),
                name="result_uncertainty_value_not_negative", field="uncertainty_value", message="A ± figure is not negative.",
            ),
            _check(
                Q(uncertainty_level__isnull=True) | Q(uncertainty_kind=UncertaintyKind.CI),
                name="result_level_only_for_ci", field="uncertainty_level", message="Only a confidence interval has a level.",
            ),
            _check(Q(relation__in=Relation.values), name="result_relation_valid", field="relation", message="Unknown relation."),
            _check(
                Q(relation=Relation.ABSOLUTE, reference_configuration__isnull=True)
                | (~Q(relation=Relation.ABSOLUTE) & Q(reference_configuration__isnull=False)),
                name="result_relative_has_reference", field="reference_configuration",
                message="A ratio or difference names the configuration it is relative to, and only those do.",
            ),
        ]

    def clean(self) -> None:
        """The unit rule (see records.db_triggers) and the printed-value check, as form errors."""
        super().clean()
        errors: dict[str, str] = {}
        protocol = getattr(getattr(self, "evaluation", None), "protocol", None)
        if protocol is not None and self.unit != protocol.metric_unit:
            errors["unit"] = f"must be {protocol.metric_unit!r}, the metric unit of the evaluation's protocol"
        if isinstance(self.value, Decimal) and self.printed_value:
            problem = printed_value_problem(value=self.value, printed=self.printed_value)
            if problem:
                errors["printed_value"] = problem
            spread = printed_spread(self.printed_value)
            if spread is not None and "printed_value" not in errors:
                if self.uncertainty_value is None:
                    errors["uncertainty_value"] = f"{self.printed_value!r} prints ±{exact_text(spread)}: record it with its kind"
                elif spread.as_tuple() != self.uncertainty_value.as_tuple():
                    errors["uncertainty_value"] = f"must be {exact_text(spread)}, the ± figure printed in {self.printed_value!r}"
        if isinstance(self.value, Decimal):
            if self.lower_bound is not None and self.lower_bound > self.value:
                errors["lower_bound"] = "The lower bound cannot exceed the value."
            if self.upper_bound is not None and self.upper_bound < self.value:
                errors["upper_bound"] = "The upper bound cannot be below the value."
        if self.uncertainty_level is not None and not 0 < self.uncertainty_level < 100:
            errors["uncertainty_level"] = "A confidence level is a percentage between 0 and 100, e.g. 95."
        if errors:
            raise ValidationError(errors)

    def __str__(self) -> str:
        return f"{self.display_value} {self.unit}"

    @property
    def display_value(self) -> str:
        """The exact value with its printed digits, for readers (0.410, 3.00 × 10¹¹)."""
        return display(self.value)



class EvidenceRow(CuratedModel, Reviewable):
    protocol = models.ForeignKey(Protocol, on_delete=models.PROTECT, related_name="evidence_rows")
    evaluation = models.ForeignKey(Evaluation, null=True, blank=True, on_delete=models.PROTECT, related_name="evidence_rows")
    property_name = models.CharField(max_length=100, help_text="The field the statement is about, e.g. metric.")
    statement = models.TextField()
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="evidence_rows")
    locator = models.CharField(max_length=500)
    quote = models.TextField(blank=True)
    support = models.CharField(max_length=20, choices=EvidenceSupport.choices, default=EvidenceSupport.VERIFIES_FIELD)
    history = HistoricalRecords()

    class Meta:
        ordering = ["protocol_id", "property_name", "stable_id"]
        constraints = [
            _non_empty("stable_id", "evidencerow"),
            _non_empty("statement", "evidencerow"),
            _check(Q(support__in=EvidenceSupport.values), name="evidencerow_support_valid", field="support", message="Unknown kind of support."),
        ]

    def __str__(self) -> str:
        return f"{self.property_name}: {self.statement[:60]}"


class BaselineRole(CuratedModel, Reviewable):
    """Per protocol, the null control and the conventional reference."""

    protocol = models.ForeignKey(Protocol, on_delete=models.CASCADE, related_name="baseline_roles")
    kind = models.CharField(max_length=30, choices=BaselineKind.choices)
    status = models.CharField(max_length=20, choices=BaselineStatus.choices, default=BaselineStatus.PROPOSED)
    selection_rule = models.TextField()
    requirements = models.TextField(blank=True, help_text="What must be reviewed before implementation or execution.")
    configuration = models.ForeignKey(
        Configuration, null=True, blank=True, on_delete=models.PROTECT, related_name="baseline_roles",
        help_text="The configuration that fills the role, once one is selected.",
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["protocol_id", "kind"]
        constraints = [
            _non_empty("stable_id", "baselinerole"),
            models.UniqueConstraint(fields=["protocol", "kind"], name="baselinerole_one_per_kind"),
            _check(Q(kind__in=BaselineKind.values), name="baselinerole_kind_valid", field="kind", message="Unknown baseline kind."),
            _check(Q(status__in=BaselineStatus.values), name="baselinerole_status_valid", field="status", message="Unknown baseline status."),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.stable_id})"

    @property
    def is_active(self) -> bool:
        return self.status != BaselineStatus.RETIRED


class Decision(CuratedModel):
    """A choice a reader faces ("Select an execution workflow ..."), assessed by protocols."""

    page_url_name = "records:decision"
    title = models.CharField(max_length=500)
    description = models.TextField(blank=True)
    protocols = models.ManyToManyField(Protocol, blank=True, related_name="decisions")
    history = HistoricalRecords(m2m_fields=[protocols])

    class Meta:
        ordering = ["title", "stable_id"]
        constraints = [_non_empty("stable_id", "decision"), _non_empty("title", "decision")]


class ImportSnapshot(models.Model):
    """What a document's last import wrote to a record, field by field (references as stable ids,
    decimals as their exact text): the base of that document's next three-way merge
    (records.imports), so that a re-import never silently overwrites what a curator or an accepted
    correction changed since. Kept per document (by its title): two documents that hold the same
    record each merge against their own last import, and one cannot undo the other unnoticed.
    Bookkeeping of the import service, not a catalogue record."""

    document = models.CharField(max_length=500, blank=True, help_text="The import document's title.")
    section = models.CharField(max_length=40, help_text='The import document\'s section, e.g. "evaluations".')
    stable_id = models.CharField(max_length=150)
    values = models.JSONField()
    imported_at = models.DateTimeField()
    imported_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["document", "section", "stable_id"], name="importsnapshot_one_per_document_record")]

    def __str__(self) -> str:
        return f"{self.section}/{self.stable_id}"
