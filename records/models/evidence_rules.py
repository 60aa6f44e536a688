"""The rules evaluations and results are judged by, as plain functions: whether an evaluation enters
comparisons (`evaluation_comparable`, and `comparable_q` for queries) and whether a value's quote
prints it (`quote_problem_of`)."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from django.db.models import Q

from records.models.base import ReadingMethod
from records.values import quote_value_problem
from reviews.models import ReviewState

if TYPE_CHECKING:
    from records.models.evidence import Evaluation
    from records.models.results import Result


def evaluation_comparable(*, review_state: str, original_state: str | None, different_measurement: str) -> bool:
    """Whether an evaluation enters comparisons: source checked, a measurement of what its protocol
    states (not a different one: another shape, task or step count), and, when it repeats another
    source's measurement, only while that original is unchecked. A checked original is compared
    itself (the measurement counts once); an excluded one keeps its copies out too (the exclusion
    is the measurement's). The API's filter (`comparable_q`), the release and the pages use this rule."""
    return (
        review_state == ReviewState.SOURCE_CHECKED
        and not different_measurement
        and original_state in (None, ReviewState.PROPOSED)
    )


# Values read from words (a sentence, a table cell, a figure's label) are checked against the quote;
# a digitised plot's and a job report's are not printed in one.
QUOTED_READINGS = frozenset({ReadingMethod.TEXT, ReadingMethod.TABLE, ReadingMethod.FIGURE_LABEL})


def quote_problem_of(result: Result, *, evaluation: Evaluation) -> str:
    """How `evaluation`'s quote contradicts the result's value, or "" (no quote, a reading that
    prints no value, or a quote that prints it); a contradiction is reported whether or not the
    result records a reason for it."""
    if evaluation.reading_method not in QUOTED_READINGS or not isinstance(result.value, Decimal):
        return ""
    return quote_value_problem(value=result.value, quote=evaluation.quote or "")


def comparable_q(prefix: str = "") -> Q:
    """`evaluation_comparable` as a query condition on evaluations (or on `<prefix>` evaluations)."""
    return Q(**{f"{prefix}review_state": ReviewState.SOURCE_CHECKED, f"{prefix}different_measurement": ""}) & (
        Q(**{f"{prefix}repeats__isnull": True}) | Q(**{f"{prefix}repeats__review_state": ReviewState.PROPOSED})
    )
