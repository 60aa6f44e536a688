"""The database itself refuses rows that break the catalogue's rules (on SQLite and PostgreSQL)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from records.models import BaselineRole, Evaluation, MeasuredBy, Protocol, ReadingMethod, Result
from tests.factories import (
    ConfigurationFactory,
    DatasetFactory,
    EvaluationFactory,
    ProtocolFactory,
    ResultFactory,
    SourceFactory,
)

pytestmark = pytest.mark.django_db


def refused(callable_) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        callable_()


def test_it_refuses_a_duplicate_stable_id():
    SourceFactory(stable_id="same-id")
    refused(lambda: SourceFactory(stable_id="same-id"))


def test_it_refuses_an_empty_stable_id():
    refused(lambda: SourceFactory(stable_id=""))


def test_it_refuses_a_result_in_another_unit_than_its_protocol_metric():
    evaluation = EvaluationFactory(protocol__metric_unit="minute")
    refused(lambda: ResultFactory(evaluation=evaluation, unit="second"))
    ResultFactory(evaluation=evaluation, unit="minute")


def test_it_refuses_changing_a_result_unit_away_from_its_protocol_metric():
    result = ResultFactory(evaluation__protocol__metric_unit="minute")
    refused(lambda: Result.objects.filter(pk=result.pk).update(unit="hour"))


def test_it_refuses_changing_a_protocol_unit_when_results_use_the_old_one():
    result = ResultFactory(evaluation__protocol__metric_unit="minute")
    protocol = result.evaluation.protocol
    refused(lambda: Protocol.objects.filter(pk=protocol.pk).update(metric_unit="second"))


def test_it_refuses_moving_an_evaluation_to_a_protocol_with_another_unit():
    result = ResultFactory(evaluation__protocol__metric_unit="minute")
    other = ProtocolFactory(metric_unit="MCC")
    refused(lambda: Evaluation.objects.filter(pk=result.evaluation_id).update(protocol=other))


def test_it_refuses_raw_sql_that_breaks_the_unit_rule():
    result = ResultFactory(evaluation__protocol__metric_unit="minute")

    def raw_update():
        with connection.cursor() as cursor:
            cursor.execute("UPDATE records_result SET unit = %s WHERE id = %s", ["hour", result.pk])

    refused(raw_update)


def test_it_refuses_more_scored_than_eligible():
    refused(lambda: EvaluationFactory(coverage_scored=11, coverage_eligible=10))
    EvaluationFactory(coverage_scored=10, coverage_eligible=10)
    EvaluationFactory(coverage_scored=None, coverage_eligible=None)


@pytest.mark.parametrize(
    "factory, fields",
    [
        (DatasetFactory, {"train_size": -1}),
        (DatasetFactory, {"test_size": -5}),
        (DatasetFactory, {"num_classes": 1}),
        (DatasetFactory, {"sequence_length_bp": 0}),
        (ConfigurationFactory, {"parameter_count": 0}),
        (EvaluationFactory, {"coverage_scored": -1}),
        (EvaluationFactory, {"coverage_eligible": -1}),
    ],
)
def test_it_refuses_negative_or_impossible_counts(factory, fields):
    refused(lambda: factory(**fields))


def test_it_refuses_a_result_with_zero_runs_or_bounds_around_nothing():
    evaluation = EvaluationFactory()
    refused(lambda: ResultFactory(evaluation=evaluation, num_runs=0))
    refused(
        lambda: ResultFactory(
            evaluation=evaluation,
            value=Decimal("5"),
            uncertainty_kind="range",
            lower_bound=Decimal("6"),
            upper_bound=Decimal("7"),
        )
    )
    refused(
        lambda: ResultFactory(
            evaluation=evaluation,
            value=Decimal("5"),
            uncertainty_kind="range",
            lower_bound=Decimal("3"),
            upper_bound=Decimal("4"),
        )
    )
    ResultFactory(
        evaluation=evaluation,
        value=Decimal("5"),
        uncertainty_kind="range",
        lower_bound=Decimal("4"),
        upper_bound=Decimal("6"),
        num_runs=3,
    )


def test_it_refuses_a_reported_evaluation_without_a_source():
    refused(lambda: EvaluationFactory(measured_by=MeasuredBy.AUTHORS, source=None))
    EvaluationFactory(measured_by=MeasuredBy.PORTAL, reading_method=ReadingMethod.JOB_REPORT, source=None)


def test_it_refuses_an_unknown_direction_or_measuring_party():
    refused(lambda: ProtocolFactory(metric_direction="sideways"))
    refused(lambda: EvaluationFactory(measured_by="rumour"))


def test_it_refuses_two_baseline_roles_of_one_kind_on_one_protocol():
    protocol = ProtocolFactory()
    BaselineRole.objects.create(stable_id="b1", protocol=protocol, kind="null_control", selection_rule="rule")
    refused(
        lambda: BaselineRole.objects.create(
            stable_id="b2", protocol=protocol, kind="null_control", selection_rule="rule"
        )
    )


def test_it_refuses_a_duplicate_task_key_in_one_suite():
    suite = DatasetFactory()
    DatasetFactory(suite=suite, task_key="promoter_all")
    refused(lambda: DatasetFactory(suite=suite, task_key="promoter_all"))
    DatasetFactory(suite=DatasetFactory(), task_key="promoter_all")


def test_it_keeps_result_values_exact():
    result = ResultFactory(value=Decimal("123456789.123456"))
    result.refresh_from_db()
    assert result.value == Decimal("123456789.123456")
    assert result.display_value == "123456789.123456"
