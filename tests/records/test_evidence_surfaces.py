"""The same rows fed to every surface say the same (hypothesis): the protocol page and the task page
mark the same best, ranks and ties and count the same printings once; the task page, the model
page, the agreements API and the release's tables give every model the same verdict, compare the
same printings and count the others the same way."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.models import MeasuredBy, ReadingMethod
from tests.factories import DatasetFactory, GenomicModelFactory, SourceFactory, WorkFactory
from tests.records import evidence_surfaces as surfaces
from tests.records.test_evidence_rules import mcc_protocol, measure, said_everywhere

pytestmark = pytest.mark.django_db

VALUES = ("0.55", "0.549", "0.546", "0.60", "0.612", "0.41", "0.421", "0.30", "0.871", "0.873")
SPREADS = (None, None, "0.01", "0.056", "0.073")


@dataclass(frozen=True)
class Row:
    model: int  # which of three models
    source: int  # which of four sources: two versions of each of two works
    value: str
    spread: str | None
    third_party: bool
    copy: str  # "", "citation" (an uncatalogued leaderboard) or "source" (another catalogued source)
    checked: bool
    label: bool  # read off a figure's labels


rows = st.builds(
    Row,
    model=st.integers(0, 2),
    source=st.integers(0, 3),
    value=st.sampled_from(VALUES),
    spread=st.sampled_from(SPREADS),
    third_party=st.booleans(),
    copy=st.sampled_from(("", "", "citation", "source")),
    checked=st.booleans(),
    label=st.booleans(),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=st.lists(rows, min_size=1, max_size=9))
def test_every_surface_says_the_same_of_the_same_rows(client, table):
    with transaction.atomic():
        task = DatasetFactory(stable_id="the-task", name="The task")
        protocol = mcc_protocol()
        models = [GenomicModelFactory() for _ in range(3)]
        works = [WorkFactory(), WorkFactory()]
        sources = [
            SourceFactory(work=works[index // 2], published_date=f"202{index % 2 + 3}-0{index // 2 + 1}")
            for index in range(4)
        ]
        for row in table:
            copied = {}
            if row.copy == "citation":
                copied = {"original_citation": "A leaderboard", "original_locator": "H3K4me3 row"}
            elif row.copy == "source":
                copied = {"original_source": sources[(row.source + 2) % 4], "original_locator": "Table 1"}
            party = {"measured_by": MeasuredBy.THIRD_PARTY, "measured_by_name": "Others"} if row.third_party else {}
            measure(
                protocol,
                task,
                models[row.model],
                row.value,
                source=sources[row.source],
                spread=row.spread,
                reading_method=ReadingMethod.FIGURE_LABEL if row.label else ReadingMethod.TABLE,
                checked=row.checked,
                **copied,
                **party,
            )
        marks = surfaces.protocol_marks(protocol, task)
        assert marks == surfaces.task_marks(task, "mcc")
        assert surfaces.protocol_counted_once(protocol, task) == _task_counted_once(task)
        said_everywhere(client, task, "mcc", models)
        transaction.set_rollback(True)


def _task_counted_once(task) -> dict[str, str]:
    from django.http import QueryDict

    from pages import identity_pages

    page = identity_pages.task_page(stable_id=task.stable_id, params=QueryDict())
    return {
        other.printing.evaluation.stable_id: other.status if other.disagrees else "copy"
        for view in page.tables
        for row in view.table.rows
        for other in row.measurement.others
    }
