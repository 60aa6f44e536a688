"""The unit rule is checked in Python by records.rules alone; forms, services and the import say it in the same words."""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from records.imports import ImportInvalid, records_import
from records.models import Result
from records.rules import count_off_unit, unit_problem
from records.seed import seed_document
from records.services import record_save
from tests.factories import EvaluationFactory, ProtocolFactory, ResultFactory


def test_it_accepts_a_result_in_its_protocols_unit_or_when_that_unit_is_not_known():
    assert unit_problem(unit="minute", metric_unit="minute") == ""
    assert unit_problem(unit="hour", metric_unit=None) == ""


def test_it_names_the_unit_a_result_must_have_and_whose_it_is():
    assert (
        unit_problem(unit="hour", metric_unit="minute")
        == "must be 'minute', the metric unit of the evaluation's protocol"
    )
    assert (
        unit_problem(unit="hour", metric_unit="minute", protocol="p-1")
        == "must be 'minute', the metric unit of protocol 'p-1'"
    )
    assert (
        unit_problem(unit=None, metric_unit="minute", protocol="p-1")
        == "must be 'minute', the metric unit of protocol 'p-1'"
    )


@pytest.mark.django_db
def test_it_counts_the_results_in_another_unit_in_one_query(django_assert_num_queries):
    evaluation = ResultFactory(value=Decimal("2")).evaluation
    ResultFactory(evaluation=evaluation)
    with django_assert_num_queries(1):
        assert count_off_unit(evaluation.results.all(), metric_unit="hour") == 2
    with django_assert_num_queries(1):
        assert count_off_unit(evaluation.results.all(), metric_unit="minute") == 0


@pytest.mark.django_db
def test_a_result_form_a_moved_evaluation_and_a_changed_protocol_unit_are_refused_by_the_rule(curator):
    result = ResultFactory()
    wrong = Result(
        stable_id="wrong-unit", evaluation=result.evaluation, value=Decimal("1"), unit="hour", printed_value="1 h"
    )
    with pytest.raises(ValidationError) as error:
        wrong.full_clean()
    assert error.value.message_dict["unit"] == [unit_problem(unit="hour", metric_unit="minute")]

    evaluation = result.evaluation
    evaluation.protocol = ProtocolFactory(metric_unit="hour")
    with pytest.raises(ValidationError) as error:
        record_save(record=evaluation, actor=curator, changed_fields=["protocol"])
    assert error.value.message_dict["protocol"] == [
        "1 result(s) of this evaluation are not in 'hour', this protocol's unit"
    ]

    protocol = EvaluationFactory(protocol=ResultFactory().evaluation.protocol).protocol
    protocol.metric_unit = "second"
    with pytest.raises(ValidationError) as error:
        record_save(record=protocol, actor=curator, changed_fields=["metric_unit"])
    assert error.value.message_dict["metric_unit"] == [
        "1 result(s) of this protocol are in another unit; change them first"
    ]


@pytest.mark.django_db
def test_the_import_says_the_rule_in_its_words_with_the_protocol_named(curator):
    document = copy.deepcopy(seed_document())
    result = document["evaluations"][1]["results"][0]
    result["unit"] = "hour"
    protocol = document["evaluations"][1]["protocol"]
    unit = next(p["metric"]["unit"] for p in document["protocols"] if p["stable_id"] == protocol)
    with pytest.raises(ImportInvalid) as invalid:
        records_import(document=document, actor=curator)
    message = f"must be {unit!r}, the metric unit of protocol {protocol!r}"
    assert {"path": "evaluations[1].results[0].unit", "message": message} in invalid.value.errors
