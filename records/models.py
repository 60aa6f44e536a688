"""The catalogue of benchmark evidence (DESIGN.md, "Catalogue").

Plain models: no business logic in save() or signals; writes go through records.services. Every
curated model has a stable id, timestamps and django-simple-history. What must always hold is a
database constraint (and, where one table cannot see another, a trigger: see migration 0002).
"""

from __future__ import annotations

import functools
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.urls import reverse
from simple_history.models import HistoricalRecords

from reviews.models import Reviewable

# Exact on both backends: SQLite keeps 15 significant digits of a NUMERIC value, so no more are allowed.
VALUE_DIGITS = 15
VALUE_PLACES = 6


class Direction(models.TextChoices):
    LOWER = "lower", "lower is better"
    HIGHER = "higher", "higher is better"


class SourceKind(models.TextChoices):
    PAPER = "paper", "Paper"
    PREPRINT = "preprint", "Preprint"
    DATASET_CARD = "dataset_card", "Dataset card"
    REPOSITORY = "repository", "Repository"
    WEB_PAGE = "web_page", "Web page"


class Origin(models.TextChoices):
    AUTHOR_REPORTED = "author_reported", "Author-reported"
    THIRD_PARTY = "third_party", "Reported by a third party"
    MEASURED_HERE = "measured_here", "Measured by this portal"


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


def _check(condition: Q, *, name: str, field: str, message: str) -> models.CheckConstraint:
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


class Source(CuratedModel):
    page_url_name = "records:source"
    title = models.CharField(max_length=500)
    venue = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=20, choices=SourceKind.choices, default=SourceKind.PAPER)
    authors_short = models.CharField(max_length=200, blank=True, help_text='As cited in labels, e.g. "Dalla-Torre et al. 2025".')
    citation = models.CharField(max_length=500, blank=True, help_text='Volume and pages, e.g. "Nature Methods 22, 287-297".')
    published_date = models.DateField(null=True, blank=True, help_text="First publication (online) date.")
    doi = models.CharField(max_length=200, blank=True, verbose_name="DOI")
    pmcid = models.CharField(max_length=20, blank=True, verbose_name="PMCID")
    url = models.URLField(max_length=500, blank=True, verbose_name="URL")
    copy_consulted = models.CharField(max_length=200, blank=True, help_text='Which copy was read, e.g. "full-text XML".')
    history = HistoricalRecords()

    class Meta:
        ordering = ["title", "stable_id"]
        constraints = [_non_empty("stable_id", "source"), _non_empty("title", "source")]

    def __str__(self) -> str:
        return f"{self.title} ({self.venue})" if self.venue else self.title

    @property
    def full_citation(self) -> str:
        """The citation line of the seed page: citation, online date, PMCID and the copy consulted."""
        text = self.citation
        if self.published_date:
            text += f" (published online {self.published_date.isoformat()})"
        tail = " ".join(part for part in (self.pmcid, self.copy_consulted) if part)
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
    metric_direction = models.CharField(max_length=10, choices=Direction.choices)
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
            _check(Q(metric_direction__in=Direction.values), name="protocol_direction_valid", field="metric_direction", message="Use lower or higher."),
        ]

    def clean(self) -> None:
        """The unit rule (see records.db_triggers) as a form error rather than the trigger's refusal."""
        super().clean()
        if self.pk is not None:
            others = Result.objects.filter(evaluation__protocol=self).exclude(unit=self.metric_unit).count()
            if others:
                raise ValidationError({"metric_unit": f"{others} result(s) of this protocol are in another unit; change them first"})

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
    page_url_name = "records:evaluation"
    title = models.CharField(max_length=500)
    protocol = models.ForeignKey(Protocol, on_delete=models.PROTECT, related_name="evaluations")
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="evaluations")
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="evaluations")
    origin = models.CharField(max_length=20, choices=Origin.choices)
    setup = models.CharField(max_length=300, blank=True, verbose_name="evaluation setup")
    aggregation = models.CharField(max_length=300, blank=True, help_text="Blank when the source does not report it.")
    uncertainty = models.CharField(max_length=300, blank=True, help_text="Blank when the source does not report it.")
    coverage_scored = models.PositiveIntegerField(null=True, blank=True, help_text="Blank when not reported.")
    coverage_eligible = models.PositiveIntegerField(null=True, blank=True, help_text="Blank when not reported.")
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.PROTECT, related_name="evaluations")
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
            _check(Q(origin__in=Origin.values), name="evaluation_origin_valid", field="origin", message="Unknown origin."),
            _check(
                Q(coverage_scored__isnull=True) | Q(coverage_eligible__isnull=True) | Q(coverage_scored__lte=F("coverage_eligible")),
                name="evaluation_coverage_scored_le_eligible",
                field="coverage_scored",
                message="More items scored than eligible.",
            ),
            # Only the portal's own measurements may lack a literature source.
            _check(
                Q(origin="measured_here") | Q(source__isnull=False),
                name="evaluation_reported_has_source",
                field="source",
                message="A reported evaluation needs its source (only the portal's own measurements have none).",
            ),
        ]

    def clean(self) -> None:
        """Moving an evaluation to another protocol must keep its results in that protocol's unit."""
        super().clean()
        protocol = getattr(self, "protocol", None)
        if self.pk is not None and protocol is not None:
            others = self.results.exclude(unit=protocol.metric_unit).count()
            if others:
                raise ValidationError({"protocol": f"{others} result(s) of this evaluation are not in {protocol.metric_unit!r}, this protocol's unit"})


class Result(CuratedModel):
    """One metric row of an evaluation, in its protocol's unit (a trigger keeps them equal)."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="results")
    value = models.DecimalField(max_digits=VALUE_DIGITS, decimal_places=VALUE_PLACES)
    unit = models.CharField(max_length=50)
    printed_value = models.CharField(max_length=200, help_text='As the source prints it, e.g. "20 min".')
    lower_bound = models.DecimalField(max_digits=VALUE_DIGITS, decimal_places=VALUE_PLACES, null=True, blank=True)
    upper_bound = models.DecimalField(max_digits=VALUE_DIGITS, decimal_places=VALUE_PLACES, null=True, blank=True)
    num_runs = models.PositiveIntegerField(null=True, blank=True, help_text="Blank when not reported.")
    history = HistoricalRecords()

    class Meta:
        ordering = ["evaluation_id", "stable_id"]
        constraints = [
            _non_empty("stable_id", "result"),
            _non_empty("unit", "result"),
            _check(Q(num_runs__isnull=True) | Q(num_runs__gte=1), name="result_runs_positive", field="num_runs", message="The number of runs is at least 1."),
            _check(Q(lower_bound__isnull=True) | Q(lower_bound__lte=F("value")), name="result_lower_bound_le_value", field="lower_bound", message="The lower bound cannot exceed the value."),
            _check(Q(upper_bound__isnull=True) | Q(upper_bound__gte=F("value")), name="result_upper_bound_ge_value", field="upper_bound", message="The upper bound cannot be below the value."),
        ]

    def clean(self) -> None:
        """A result is in its protocol's unit (see records.db_triggers), said as a form error."""
        super().clean()
        protocol = getattr(getattr(self, "evaluation", None), "protocol", None)
        if protocol is not None and self.unit != protocol.metric_unit:
            raise ValidationError({"unit": f"must be {protocol.metric_unit!r}, the metric unit of the evaluation's protocol"})

    def __str__(self) -> str:
        return f"{self.display_value} {self.unit}"

    @property
    def display_value(self) -> str:
        """The exact value without trailing zeros (20.000000 -> 20)."""
        return format_decimal(self.value)


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


def format_decimal(value: Decimal | None) -> str:
    """Plain positional notation without trailing zeros: the exact value as written."""
    if value is None:
        return ""
    text = format(value.normalize(), "f")
    return "0" if text in {"-0", "0"} else text
