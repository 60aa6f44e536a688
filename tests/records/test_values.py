"""Exact values of any magnitude: parsing, the printed-value check, display, and storage on both backends."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from records.models import Result
from records.services import record_save
from records.values import ValueInvalid, display, exact_text, parse_exact, printed_numbers, printed_value_problem
from tests.factories import EvaluationFactory, ProtocolFactory, ResultFactory


@pytest.mark.parametrize(
    "printed, numbers",
    [
        ("0.410", ["0.410"]),
        ("300B tokens", ["3.00E+11"]),
        ("1T", ["1E+12"]),
        ("3 × 10^-12", ["3E-12"]),
        ("3×10⁻¹²", ["3E-12"]),
        ("≈ 480 x 10^9 bp", ["4.80E+11"]),
        ("353,574,093,776", ["353574093776"]),
        ("74.32±0.89", ["74.32", "0.89"]),
        ("160x", ["160"]),
        ("approximately 92×", ["92"]),
        ("20 min", ["20"]),
        ("−0.5", ["-0.5"]),
        ("9 trillion", ["9E+12"]),
    ],
)
def test_it_reads_the_numbers_a_source_prints_with_their_digits(printed, numbers):
    assert [exact_text(n) for n in printed_numbers(printed)] == numbers


@pytest.mark.parametrize(
    "value, printed, problem",
    [
        ("0.410", "0.410", ""),
        ("300E9", "300B", ""),
        ("1E12", "1T tokens", ""),
        ("0.41", "0.410", "does not keep the precision printed"),
        ("0.42", "0.410", "is not the number printed"),
        ("20", "twenty minutes", "shows no number"),
    ],
)
def test_it_checks_that_the_printed_value_shows_the_value(value, printed, problem):
    found = printed_value_problem(value=Decimal(value), printed=printed)
    assert (problem in found) if problem else found == ""


@pytest.mark.parametrize("text", ["about 0.55", "NaN", "Infinity", "1e999", "0x10", "١٢", "", "1,5", "--1"])
def test_it_refuses_text_that_is_not_an_exact_decimal(text):
    with pytest.raises(ValueInvalid):
        parse_exact(text)


@pytest.mark.parametrize(
    "value, shown",
    [
        ("0.410", "0.410"),
        ("66.47", "66.47"),
        ("20", "20"),
        ("3.00E+11", "300 × 10⁹"),
        ("1E+12", "1 × 10¹²"),
        ("3E-12", "3 × 10⁻¹²"),
    ],
)
def test_it_displays_every_printed_digit_and_no_more(value, shown):
    assert display(Decimal(value)) == shown


@pytest.mark.django_db
@pytest.mark.parametrize(
    "value", ["0.410", "1E+12", "3.00E+11", "3E-12", "123456789012345678901234567890.123456789", "-0.0", "20"]
)
def test_it_stores_a_value_of_any_magnitude_exactly_with_its_precision(value):
    result = ResultFactory(value=Decimal(value), printed_value=value)
    stored = Result.objects.get(pk=result.pk).value
    assert (
        exact_text(stored) == exact_text(Decimal(value)) and stored.as_tuple() == abs(Decimal(value)).as_tuple()
        if Decimal(value).is_zero()
        else stored.as_tuple() == Decimal(value).as_tuple()
    )


@pytest.mark.django_db
def test_an_edit_from_0_41_to_0_410_is_an_edit_and_reopens_the_review(curator):
    from tests.helpers import apply_transitions

    result = ResultFactory(value=Decimal("0.41"), printed_value="0.41")
    apply_transitions(result.evaluation, "check_source")
    result.value, result.printed_value = Decimal("0.410"), "0.410"
    result.evaluation.quote = "Accuracy 0.41 (0.410 in the appendix)"
    record_save(record=result.evaluation, actor=curator, changed_fields=["quote"])
    record_save(record=result, actor=curator, changed_fields=["value", "printed_value"])
    assert exact_text(Result.objects.get(pk=result.pk).value) == "0.410"
    result.evaluation.refresh_from_db()
    assert result.evaluation.review_state == "proposed"


@pytest.mark.django_db
def test_a_value_the_printed_text_does_not_show_is_a_field_error(curator):
    result = ResultFactory(value=Decimal("0.410"), printed_value="0.410")
    result.value = Decimal("0.41")
    with pytest.raises(ValidationError) as refused:
        record_save(record=result, actor=curator, changed_fields=["value"])
    assert "printed_value" in refused.value.message_dict


@pytest.mark.django_db
def test_a_printed_plus_minus_needs_its_structured_uncertainty(curator):
    evaluation = EvaluationFactory()
    with pytest.raises(ValidationError) as refused:
        ResultFactory.build(evaluation=evaluation, value=Decimal("0.72"), printed_value="0.72 ± 0.03").full_clean()
    assert "uncertainty_value" in refused.value.message_dict
    result = ResultFactory(
        evaluation=evaluation,
        value=Decimal("0.72"),
        printed_value="0.72 ± 0.03",
        uncertainty_kind="sd",
        uncertainty_value=Decimal("0.03"),
        num_runs=10,
    )
    assert exact_text(Result.objects.get(pk=result.pk).uncertainty_value) == "0.03"


class ExactValuesRoundTrip(TestCase):
    """Whatever a paper prints, the database gives back the same digits (hypothesis)."""

    @settings(max_examples=60, deadline=None)
    @given(
        digits=st.integers(min_value=0, max_value=10**30),
        exponent=st.integers(min_value=-40, max_value=40),
        negative=st.booleans(),
    )
    def test_any_decimal_round_trips_through_the_database(self, digits, exponent, negative):
        value = Decimal(f"{'-' if negative else ''}{digits}E{exponent}")
        protocol = ProtocolFactory(metric_unit="score")
        result = ResultFactory(evaluation__protocol=protocol, value=value, printed_value=exact_text(value))
        expected = abs(value) if value.is_zero() else value  # no negative zero
        assert Result.objects.get(pk=result.pk).value.as_tuple() == expected.as_tuple()
