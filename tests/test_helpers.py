"""The test helpers that stand in for a real load: what they put in place must be what the load writes."""

from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.db import transaction
from django.test import Client

from records.models import Evaluation, Protocol
from records.seed import PROTOCOL_ID
from reviews.models import ReviewEvent
from tests.helpers import WrittenRows, seed_import

pytestmark = pytest.mark.django_db


def _page() -> str:
    html = Client(HTTP_HOST="localhost").get(f"/protocols/{PROTOCOL_ID}/").content.decode()
    text = re.sub(r'name="(csrfmiddlewaretoken|started)" value="[^"]*"', "", html)
    return re.sub(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?Z?)?", "DATE", text)


def _row_counts() -> dict[str, int]:
    return {model._meta.db_table: model._base_manager.count() for model in apps.get_models(include_auto_created=True)}


def _imported() -> tuple[str, dict[str, int]]:
    """The seed page and every table's row count after a real import, in a transaction rolled back."""
    with transaction.atomic():
        seed_import()
        counts, page = _row_counts(), _page()  # counted before the page stores its protocol's summary
        transaction.set_rollback(True)
    return page, counts


def test_the_seed_rows_copied_in_show_the_page_the_import_shows(settings):
    rows = WrittenRows.capture(seed_import)
    assert rows is not None
    page, counts = _imported()

    assert rows.put()

    assert _row_counts() == counts
    assert _page() == page
    assert Evaluation.objects.filter(review_state="excluded").count() == 2
    # The review log names its records through content types, copied by their natural keys.
    assert {event.record for event in ReviewEvent.objects.all()} >= {Protocol.objects.get(stable_id=PROTOCOL_ID)}


def test_it_writes_nothing_where_the_catalogue_is_not_as_it_was():
    rows = WrittenRows.capture(seed_import)
    assert rows is not None
    seed_import()
    counts = _row_counts()

    assert not rows.put()

    assert _row_counts() == counts


def test_it_reads_nothing_where_the_catalogue_is_not_empty():
    seed_import()

    assert WrittenRows.capture(seed_import) is None
