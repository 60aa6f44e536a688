"""An accepted correction that changes a value changes what search finds, in the same transaction
(records.search_index, through records' services)."""

from __future__ import annotations

import pytest

from corrections.services import correction_decide, correction_submit
from records.models import Result
from records.search import search
from tests.corrections.test_corrections import RESULT_500M

pytestmark = pytest.mark.django_db


def test_a_value_corrected_is_found_by_its_new_number_and_no_longer_by_the_old(seeded, curator):
    assert [hit.stable_id for hit in search(query="20", record_type="result").hits] == [RESULT_500M]
    correction = correction_submit(
        target=Result.objects.get(stable_id=RESULT_500M),
        field_name="value",
        proposed_value="15",
        explanation="The single-GPU figure is 15 minutes.",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.1",
    )
    correction_decide(
        correction=correction,
        actor=curator,
        decision="accept",
        response="ok",
        apply_value=True,
        quote_reason="The Discussion's figure.",
    )
    [hit] = search(query="15", record_type="result").hits
    assert hit.stable_id == RESULT_500M and hit.detail.startswith("15 minute (printed 15 min)")
    assert search(query="20", record_type="result").hits == []
