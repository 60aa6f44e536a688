"""Results: the metric rows of an evaluation, exact with their printed precision."""

from __future__ import annotations

from decimal import Decimal
from typing import ClassVar

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import FloatField, Q
from django.db.models.functions import Cast
from django.db.models.lookups import GreaterThanOrEqual, LessThanOrEqual

from common.history import AuditHistory
from records.fields import ExactDecimalField
from records.models.base import CuratedModel, Relation, UncertaintyKind, _check, _non_empty, api_list_indexes
from records.models.catalogue import Configuration
from records.models.evidence import Evaluation
from records.models.evidence_rules import quote_problem_of
from records.rules import unit_problem
from records.values import display, exact_text, printed_spread, printed_value_problem


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
