"""The release's agreement tables read only the columns the rules use, and no row one query at a time."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from records.models import Configuration, Evaluation, GenomicModel, Result
from records.models.base import MeasuredBy, ReadingMethod
from releases import identity_rows
from tests.factories import DatasetFactory, ProtocolFactory, SourceFactory

pytestmark = pytest.mark.django_db


def add_subjects(protocol, task, start: int, count: int) -> None:
    """`count` configurations, every other one naming a model of its own, each measured by its authors
    and copied by a review (original_source)."""
    review = SourceFactory(stable_id=f"review-{start}")
    for i in range(start, start + count):
        model = GenomicModel.objects.create(stable_id=f"m-{i}", name=f"Model {i}") if i % 2 else None
        configuration = Configuration.objects.create(stable_id=f"c-{i}", name=f"Configuration {i}", model=model)
        for kind, source, original in (("own", protocol.source, None), ("copy", review, protocol.source)):
            evaluation = Evaluation.objects.create(
                stable_id=f"e-{i}-{kind}",
                title=f"Evaluation {i} {kind}",
                protocol=protocol,
                configuration=configuration,
                dataset=task,
                source=source,
                original_source=original,
                measured_by=MeasuredBy.AUTHORS,
                reading_method=ReadingMethod.TABLE,
                quote="q",
            )
            Result.objects.create(
                evaluation=evaluation, stable_id=f"r-{i}-{kind}", value=Decimal("0.5"), unit="MCC", printed_value="0.5"
            )


def queries_and_rows() -> tuple[int, list[dict[str, object]]]:
    with CaptureQueriesContext(connection) as captured:
        list(identity_rows.agreement_rows(chunk_size=10_000))
        rows = list(identity_rows.agreement_measurement_rows(chunk_size=10_000))
    return len(captured.captured_queries), rows


def test_the_agreement_tables_read_in_the_same_queries_however_many_evaluations():
    protocol = ProtocolFactory(metric_short_name="MCC", metric_unit="MCC")
    task = DatasetFactory(stable_id="one-task")
    add_subjects(protocol, task, 0, 2)
    few, rows = queries_and_rows()
    assert len(rows) == 4 and {row["counted_as"] for row in rows} == {"compared", "copy"}
    add_subjects(protocol, task, 2, 6)
    many, rows = queries_and_rows()
    assert len(rows) == 16
    assert many == few  # no column left out of the read is fetched row by row
