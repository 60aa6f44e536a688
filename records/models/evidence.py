"""Evaluations and their results (the measurements) and evidence rows."""

from __future__ import annotations

from decimal import Decimal
from typing import ClassVar

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, FloatField, Q
from django.db.models.functions import Cast
from django.db.models.lookups import GreaterThanOrEqual, LessThanOrEqual

from common.history import AuditHistory
from records.fields import ExactDecimalField
from records.models.base import (
    CuratedModel,
    MeasuredBy,
    ReadingMethod,
    Relation,
    UncertaintyKind,
    _check,
    _non_empty,
    api_list_indexes,
)
from records.models.catalogue import Configuration, Dataset, Protocol, Source
from records.models.evidence_rules import evaluation_comparable, quote_problem_of
from records.rules import count_off_unit, unit_problem
from records.rules.provenance import Provenance, provenance_of
from records.values import display, exact_text, printed_spread, printed_value_problem
from reviews.models import Reviewable


class Evaluation(CuratedModel, Reviewable):
    """One measurement of a configuration on a dataset or task under a protocol, as one source reports it.

    Provenance has three parts: the source that reports it (`source`), the party that measured it
    (`measured_by`, `measured_by_name`), and how the curator read it (`reading_method`). A source
    that only copies another's number `repeats` that evaluation: the same measurement reported again,
    counted once in comparisons and never as a replication.
    """

    page_url_name = "records:evaluation"
    # Set on an instance whose value-and-quote check its caller runs on the whole change (the admin's
    # inline, the import's plan), so that `clean` does not read the stored rows it replaces.
    quote_checked_elsewhere = False
    title = models.CharField(max_length=500)
    protocol = models.ForeignKey(Protocol, on_delete=models.PROTECT, related_name="evaluations")
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="evaluations")
    dataset = models.ForeignKey(
        Dataset,
        on_delete=models.PROTECT,
        related_name="evaluations",
        help_text="The dataset or task it was measured on.",
    )
    measured_by = models.CharField(max_length=20, choices=MeasuredBy.choices, help_text="Who ran the measurement.")
    measured_by_name = models.CharField(
        max_length=300,
        blank=True,
        help_text='Who the third party is, e.g. "Zhou et al. 2024 (DNABERT-2 authors)"; required for a third party.',
    )
    repeats = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="repeated_by",
        help_text="The evaluation whose measurement this source reports again (a copy, not a replication).",
    )
    reading_method = models.CharField(
        max_length=20, choices=ReadingMethod.choices, help_text="How the value was read off its source."
    )
    setup = models.TextField(blank=True, verbose_name="evaluation setup")
    aggregation = models.TextField(blank=True, help_text="Blank when the source does not report it.")
    uncertainty = models.TextField(
        blank=True,
        verbose_name="uncertainty note",
        help_text="The source's words on uncertainty; blank when it reports none. The numbers are on each result.",
    )
    coverage_scored = models.PositiveIntegerField(null=True, blank=True, help_text="Blank when not reported.")
    coverage_eligible = models.PositiveIntegerField(null=True, blank=True, help_text="Blank when not reported.")
    source = models.ForeignKey(
        Source,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="evaluations",
        help_text="The source that reports it.",
    )
    source_locator = models.CharField(max_length=500, blank=True)
    quote = models.TextField(blank=True, help_text="The source's words, verbatim.")
    original_source = models.ForeignKey(
        Source,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="copied_evaluations",
        help_text="The source that first published this number, when this source reports it again (catalogued).",
    )
    # db_default: rows written by code that predates these columns (an older migration's data step) stay valid.
    original_citation = models.CharField(
        max_length=300,
        blank=True,
        default="",
        db_default="",
        help_text='The original when it is not catalogued, e.g. "InstaDeep Nucleotide Transformer leaderboard".',
    )
    original_locator = models.CharField(
        max_length=500, blank=True, default="", db_default="", help_text="Where in the original."
    )
    concern_source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    concern_locator = models.CharField(max_length=500, blank=True)
    different_measurement = models.CharField(
        max_length=500,
        blank=True,
        help_text=(
            "What makes this a different measurement from the protocol's (model shape, task, step count), e.g. "
            '"30 steps of the tiny preset; the recipe runs 10,000 of nt-v1-500m"; blank when it measures what the '
            "protocol states. A different measurement is labelled as such and never compared with the protocol's own."
        ),
    )
    history = AuditHistory()

    class Meta:
        ordering = ["configuration__name", "stable_id"]
        indexes = api_list_indexes("evaluation")
        constraints = [
            _non_empty("stable_id", "evaluation"),
            _non_empty("title", "evaluation"),
            _check(
                Q(measured_by__in=MeasuredBy.values),
                name="evaluation_measured_by_valid",
                field="measured_by",
                message="Unknown measuring party.",
            ),
            _check(
                ~Q(measured_by=MeasuredBy.THIRD_PARTY) | ~Q(measured_by_name=""),
                name="evaluation_third_party_named",
                field="measured_by_name",
                message="Name the third party that measured it.",
            ),
            _check(
                Q(reading_method__in=ReadingMethod.values),
                name="evaluation_reading_method_valid",
                field="reading_method",
                message="Unknown reading method.",
            ),
            # The portal's own runs are read from their job report, and only they are.
            _check(
                Q(measured_by=MeasuredBy.PORTAL, reading_method=ReadingMethod.JOB_REPORT)
                | (~Q(measured_by=MeasuredBy.PORTAL) & ~Q(reading_method=ReadingMethod.JOB_REPORT)),
                name="evaluation_job_report_iff_portal",
                field="reading_method",
                message="Only the portal's own measurements are read from a job report, and they always are.",
            ),
            _check(
                ~Q(repeats=F("id")),
                name="evaluation_not_own_repeat",
                field="repeats",
                message="An evaluation cannot repeat itself.",
            ),
            _check(
                Q(coverage_scored__isnull=True)
                | Q(coverage_eligible__isnull=True)
                | Q(coverage_scored__lte=F("coverage_eligible")),
                name="evaluation_coverage_scored_le_eligible",
                field="coverage_scored",
                message="More items scored than eligible.",
            ),
            _check(
                Q(original_source__isnull=True) | Q(original_citation=""),
                name="evaluation_original_once",
                field="original_citation",
                message="Name the original either as a catalogued source or as a citation, not both.",
            ),
            _check(
                Q(original_locator="") | Q(original_source__isnull=False) | ~Q(original_citation=""),
                name="evaluation_original_locator_has_original",
                field="original_locator",
                message="A locator in the original needs the original (its source or its citation).",
            ),
            _check(
                Q(repeats__isnull=True) | (Q(original_source__isnull=True) & Q(original_citation="")),
                name="evaluation_repeat_or_original",
                field="repeats",
                message="A repeat points at the catalogued evaluation; an original source or citation is for one that is not catalogued.",
            ),
            _check(
                Q(original_source__isnull=True) | Q(source__isnull=True) | ~Q(original_source=F("source")),
                name="evaluation_original_not_own_source",
                field="original_source",
                message="The original is another source than the one that reports the copy.",
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
            others = count_off_unit(self.results.all(), metric_unit=protocol.metric_unit)
            if others:
                raise ValidationError(
                    {
                        "protocol": f"{others} result(s) of this evaluation are not in {protocol.metric_unit!r}, this protocol's unit"
                    }
                )
        if self.pk is not None:
            moved = self.repeated_by.exclude(
                protocol_id=self.protocol_id, configuration_id=self.configuration_id, dataset_id=self.dataset_id
            )
            if moved.exists() or (self.repeats_id and self.repeated_by.exists()):
                raise ValidationError(
                    {
                        "repeats" if self.repeats_id else "protocol": (
                            f"{self.repeated_by.count()} evaluation(s) repeat this one: they must keep its protocol, configuration and "
                            "dataset, and an original repeats nothing; change or unlink them first"
                        )
                    }
                )
        self._clean_quote_of_stored_results()
        original = self.repeats if self.repeats_id else None
        if original is not None:
            problem = ""
            if original.repeats_id:
                problem = f"{original.stable_id} repeats {original.repeats.stable_id} itself: point to the original measurement"
            elif (original.protocol_id, original.configuration_id, original.dataset_id) != (
                self.protocol_id,
                self.configuration_id,
                self.dataset_id,
            ):
                problem = "the repeated evaluation must have the same protocol, configuration and dataset"
            elif original.measured_by != self.measured_by:
                problem = (
                    f"the same measurement has the same measuring party ({original.get_measured_by_display().lower()})"
                )
            elif self.source_id is not None and original.source_id == self.source_id:
                problem = "a repeat is the same measurement reported by another source; this one has the same source"
            if problem:
                raise ValidationError({"repeats": problem})

    def _clean_quote_of_stored_results(self) -> None:
        """A new quote (or reading method) must still print each stored result's value, or the
        result says why not. Skipped where the caller validates the results alongside, in memory
        (the admin's inline, the import's plan: `quote_checked_elsewhere`)."""
        if self.pk is None or self.quote_checked_elsewhere:
            return
        stored = Evaluation.objects.filter(pk=self.pk).values_list("quote", "reading_method").first()
        if stored is None or stored == (self.quote, self.reading_method):
            return
        problems = [
            f"{result.stable_id}: {problem}"
            for result in self.results.all()
            if (problem := result.quote_problem(evaluation=self))
        ]
        if problems:
            raise ValidationError(
                {
                    "quote": f"{len(problems)} result(s) would contradict this quote ({'; '.join(problems[:5])}): "
                    "correct the values, or record on each result why its quote does not print it"
                }
            )

    def quote_contradictions(self) -> list[tuple[Result, str]]:
        """Its results whose value the quote does not print, each with why (a recorded reason included)."""
        return [
            (result, problem) for result in self.results.all() if (problem := quote_problem_of(result, evaluation=self))
        ]

    def review_check_problems(self) -> list[str]:
        return [f"{result.stable_id}: {problem}" for result, problem in self.quote_contradictions()]

    @property
    def is_copy(self) -> bool:
        """Whether this source reports a number first published elsewhere (catalogued or not)."""
        return bool(self.repeats_id or self.original_source_id or self.original_citation)

    @property
    def provenance(self) -> Provenance:
        """Where its number comes from, as the same-measurement rule reads it (records.rules.evidence)."""
        return provenance_of(
            source=self.source if self.source_id else None,
            repeats_id=self.repeats_id,
            original_source=self.original_source if self.original_source_id else None,
            original_citation=self.original_citation,
        )

    @property
    def results_with_uncertainty(self) -> list[Result]:
        return [result for result in self.results.all() if result.uncertainty_kind]

    @property
    def is_comparable(self) -> bool:
        return evaluation_comparable(
            review_state=self.review_state,
            original_state=self.repeats.review_state if self.repeats_id is not None else None,
            different_measurement=self.different_measurement,
        )


class Result(CuratedModel):
    """One metric row of an evaluation, in its protocol's unit (a trigger keeps them equal).

    The value is exact with its printed precision (records.values); `printed_value` is the source's
    text and must show that number. Uncertainty is structured: a kind, and either the printed ±
    figure (`uncertainty_value`) or bounds. A relative result (a ratio or difference to a named
    reference configuration) is compared only with results relative to the same reference.
    """

    quote_checked_elsewhere = False  # as on Evaluation
    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="results")
    value = ExactDecimalField(help_text="The number as printed, with its precision: 0.410, 66.47, 300E9, 3E-12.")
    unit = models.CharField(max_length=50)
    printed_value = models.CharField(
        max_length=200, help_text='As the source prints it, e.g. "20 min", "0.410", "74.32±0.89", "300B".'
    )
    uncertainty_kind = models.CharField(
        max_length=10, blank=True, choices=UncertaintyKind.choices, help_text="Blank when the source reports none."
    )
    uncertainty_value = ExactDecimalField(
        null=True, blank=True, help_text="The printed ± figure (for s.d., s.e., or a ± range)."
    )
    lower_bound = ExactDecimalField(null=True, blank=True)
    upper_bound = ExactDecimalField(null=True, blank=True)
    uncertainty_level = ExactDecimalField(
        null=True, blank=True, help_text="A confidence interval's level in percent, e.g. 95."
    )
    num_runs = models.PositiveIntegerField(
        null=True, blank=True, help_text="n: runs, seeds or folds behind the value; blank when not reported."
    )
    relation = models.CharField(max_length=10, choices=Relation.choices, default=Relation.ABSOLUTE)
    reference_configuration = models.ForeignKey(
        Configuration,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="relative_results",
        help_text="For a ratio or difference: the configuration it is relative to.",
    )
    quote_mismatch_reason = models.TextField(
        blank=True,
        default="",
        db_default="",
        verbose_name="why the quote does not print it",
        help_text=(
            "Only when the evaluation's quote does not print this value: why the value is right all the same "
            '(e.g. "the quote is the caption; the value is in the table body it introduces"). Blank otherwise.'
        ),
    )
    history = AuditHistory()

    # The measurement as its source prints it, in declaration order: the one list the import
    # format, the review's sourced fields and the page rows take the result's own fields from.
    MEASUREMENT_FIELDS: ClassVar[tuple[str, ...]] = (
        "value",
        "unit",
        "printed_value",
        "uncertainty_kind",
        "uncertainty_value",
        "lower_bound",
        "upper_bound",
        "uncertainty_level",
        "num_runs",
        "relation",
        "quote_mismatch_reason",
    )

    class Meta:
        ordering = ["evaluation_id", "stable_id"]
        indexes = api_list_indexes("result")
        constraints = [
            _non_empty("stable_id", "result"),
            _non_empty("unit", "result"),
            _non_empty("printed_value", "result"),
            _check(
                Q(num_runs__isnull=True) | Q(num_runs__gte=1),
                name="result_runs_positive",
                field="num_runs",
                message="The number of runs is at least 1.",
            ),
            _check(
                Q(lower_bound__isnull=True)
                | LessThanOrEqual(Cast("lower_bound", FloatField()), Cast("value", FloatField())),
                name="result_lower_bound_le_value",
                field="lower_bound",
                message="The lower bound cannot exceed the value.",
            ),
            _check(
                Q(upper_bound__isnull=True)
                | GreaterThanOrEqual(Cast("upper_bound", FloatField()), Cast("value", FloatField())),
                name="result_upper_bound_ge_value",
                field="upper_bound",
                message="The upper bound cannot be below the value.",
            ),
            _check(
                Q(uncertainty_kind__in=["", *UncertaintyKind.values]),
                name="result_uncertainty_kind_valid",
                field="uncertainty_kind",
                message="Unknown kind of uncertainty.",
            ),
            _check(
                ~Q(uncertainty_kind="")
                | Q(
                    uncertainty_value__isnull=True,
                    lower_bound__isnull=True,
                    upper_bound__isnull=True,
                    uncertainty_level__isnull=True,
                ),
                name="result_uncertainty_has_kind",
                field="uncertainty_kind",
                message="Say what kind of uncertainty the figures are (s.d., s.e., CI or range).",
            ),
            _check(
                Q(uncertainty_kind="")
                | Q(uncertainty_value__isnull=False)
                | Q(lower_bound__isnull=False)
                | Q(upper_bound__isnull=False),
                name="result_uncertainty_has_figures",
                field="uncertainty_value",
                message="An uncertainty needs its printed ± figure or a bound.",
            ),
            _check(
                Q(uncertainty_value__isnull=True) | GreaterThanOrEqual(Cast("uncertainty_value", FloatField()), 0),
                name="result_uncertainty_value_not_negative",
                field="uncertainty_value",
                message="A ± figure is not negative.",
            ),
            _check(
                Q(uncertainty_level__isnull=True) | Q(uncertainty_kind=UncertaintyKind.CI),
                name="result_level_only_for_ci",
                field="uncertainty_level",
                message="Only a confidence interval has a level.",
            ),
            _check(
                Q(relation__in=Relation.values),
                name="result_relation_valid",
                field="relation",
                message="Unknown relation.",
            ),
            _check(
                Q(relation=Relation.ABSOLUTE, reference_configuration__isnull=True)
                | (~Q(relation=Relation.ABSOLUTE) & Q(reference_configuration__isnull=False)),
                name="result_relative_has_reference",
                field="reference_configuration",
                message="A ratio or difference names the configuration it is relative to, and only those do.",
            ),
        ]

    def clean(self) -> None:
        """The unit rule (records.rules; the database's triggers are records.db_triggers) and the printed-value check, as form errors."""
        super().clean()
        errors: dict[str, str] = {}
        evaluation = getattr(self, "evaluation", None)
        protocol = getattr(evaluation, "protocol", None)
        wrong_unit = unit_problem(unit=self.unit, metric_unit=protocol.metric_unit) if protocol is not None else ""
        if wrong_unit:
            errors["unit"] = wrong_unit
        if isinstance(self.value, Decimal) and self.printed_value:
            problem = printed_value_problem(value=self.value, printed=self.printed_value)
            if problem:
                errors["printed_value"] = problem
            spread = printed_spread(self.printed_value)
            if spread is not None and "printed_value" not in errors:
                if self.uncertainty_value is None:
                    errors["uncertainty_value"] = (
                        f"{self.printed_value!r} prints ±{exact_text(spread)}: record it with its kind"
                    )
                elif spread.as_tuple() != self.uncertainty_value.as_tuple():
                    errors["uncertainty_value"] = (
                        f"must be {exact_text(spread)}, the ± figure printed in {self.printed_value!r}"
                    )
        if evaluation is not None and "value" not in errors and not self.quote_checked_elsewhere:
            problem = self.quote_problem(evaluation=evaluation)
            if problem:
                errors["value"] = (
                    f"{problem}: correct the value or the evaluation's quote, or say in "
                    "'why the quote does not print it' why the value is right"
                )
        if isinstance(self.value, Decimal):
            if self.lower_bound is not None and self.lower_bound > self.value:
                errors["lower_bound"] = "The lower bound cannot exceed the value."
            if self.upper_bound is not None and self.upper_bound < self.value:
                errors["upper_bound"] = "The upper bound cannot be below the value."
        if self.uncertainty_level is not None and not 0 < self.uncertainty_level < 100:
            errors["uncertainty_level"] = "A confidence level is a percentage between 0 and 100, e.g. 95."
        if errors:
            raise ValidationError(errors)

    def quote_problem(self, *, evaluation: Evaluation) -> str:
        """How `evaluation`'s quote contradicts this value without a recorded reason, or ""."""
        return "" if self.quote_mismatch_reason.strip() else quote_problem_of(self, evaluation=evaluation)

    def __str__(self) -> str:
        return f"{self.display_value} {self.unit}"

    @property
    def display_value(self) -> str:
        """The exact value with its printed digits, for readers (0.410, 3.00 × 10¹¹)."""
        return display(self.value)
