"""The table review page: a curator reviews a whole imported table against its source in a few
submissions, each ticked row through the one review service, every refusal reported with its reason."""

from __future__ import annotations

import html
import re

import pytest
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from records.admin_review_table import ROWS_PER_PAGE
from records.examples import EXAMPLES_DIR, example_document
from records.imports.service import records_import
from records.models import Evaluation, Source
from reviews.models import ReviewClaim, ReviewEvent, ReviewState
from reviews.services import review_transition_apply

pytestmark = pytest.mark.django_db

GUE = "01-dnabert2-gue.json"


@pytest.fixture
def imported(seeded, curator):
    """The GUE paper's table imported by the first curator: every value proposed, that curator its last editor."""
    records_import(document=example_document(EXAMPLES_DIR / GUE), actor=curator)
    counted = Evaluation.objects.values("source").annotate(n=Count("pk")).order_by("-n")
    return Source.objects.get(pk=counted[0]["source"])  # the source of the paper's table


def url(source: Source, **params: str) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return reverse("admin:records_source_review_table", args=[source.pk]) + (f"?{query}" if query else "")


def shown_rows(body: str) -> list[str]:
    return re.findall(r'<input type="checkbox" name="rows" value="(\d+)"', body)


def submit(client, source, *, rows, transition="check_source", reason="", action="apply", every=False, **params):
    data = {"action": action, "transition": transition, "reason": reason, "shown": rows}
    if every:
        data["all_rows"] = "on"
    else:
        data["rows"] = rows
    return client.post(url(source, **params), data, follow=True)


def test_it_shows_each_value_beside_its_printed_value_locator_and_quote(client, imported, other_curator):
    client.force_login(other_curator)
    body = client.get(url(imported)).content.decode()
    proposed = Evaluation.objects.filter(source=imported, review_state=ReviewState.PROPOSED)
    assert proposed.count() > ROWS_PER_PAGE
    assert len(shown_rows(body)) == ROWS_PER_PAGE
    assert f"{proposed.count()} evaluations proposed, rows 1–{ROWS_PER_PAGE} shown" in body
    first = proposed.select_related("configuration").order_by("pk").first()
    row = body.split(f'id="row-{first.pk}"', 1)[1].split("</tr>", 1)[0]
    result = first.results.get()
    assert result.display_value in row and result.printed_value in row and html.escape(first.source_locator) in row
    assert "<blockquote>" in row


def test_the_second_curator_reviews_the_whole_table_in_a_few_submissions(client, imported, other_curator):
    client.force_login(other_curator)
    total = Evaluation.objects.filter(source=imported, review_state=ReviewState.PROPOSED).count()
    submissions = 0
    while rows := shown_rows(client.get(url(imported)).content.decode()):
        response = submit(client, imported, rows=rows, every=True, reason="Matches Table 4.")
        submissions += 1
        assert f"Check source: applied to {len(rows)} record(s)." in response.content.decode()
        assert submissions <= 5
    assert submissions == -(-total // ROWS_PER_PAGE)
    assert not Evaluation.objects.filter(source=imported, review_state=ReviewState.PROPOSED).exists()
    events = ReviewEvent.objects.filter(transition="check_source", actor=other_curator)
    assert events.count() == total and set(events.values_list("reason", flat=True)) == {"Matches Table 4."}


def test_the_curator_who_imported_it_is_refused_every_row_with_the_four_eyes_reason(client, imported, curator):
    client.force_login(curator)
    body = client.get(url(imported)).content.decode()
    assert "four-eyes rule: you edited this record last" in body  # said beside each row before trying
    rows = shown_rows(body)[:3]
    response = submit(client, imported, rows=rows).content.decode()
    assert "Check source: 3 refused." in response and "four-eyes rule: you edited this record last" in response
    assert Evaluation.objects.filter(pk__in=rows, review_state=ReviewState.PROPOSED).count() == 3


def test_a_row_reviewed_meanwhile_is_reported_changed_and_the_others_applied(
    client, imported, other_curator, make_user
):
    client.force_login(other_curator)
    rows = shown_rows(client.get(url(imported)).content.decode())[:4]
    third = make_user("curator", "curator-three")
    review_transition_apply(record=Evaluation.objects.get(pk=rows[0]), transition="check_source", actor=third)
    response = submit(client, imported, rows=rows).content.decode()
    assert "Check source: applied to 3 record(s)." in response
    assert "1 refused" in response and "the record changed meanwhile: it is source checked now" in response


def test_it_refuses_a_submission_without_rows_or_transition_and_changes_nothing(client, imported, other_curator):
    client.force_login(other_curator)
    rows = shown_rows(client.get(url(imported)).content.decode())
    before = Evaluation.objects.filter(review_state=ReviewState.PROPOSED).count()
    body = client.post(url(imported), {"action": "apply", "transition": "check_source", "shown": rows}).content.decode()
    assert "Tick the rows to act on" in body
    body = client.post(url(imported), {"action": "apply", "rows": rows[:1], "shown": rows}).content.decode()
    assert "Choose the transition to apply." in body
    body = client.post(url(imported), {"action": "apply", "transition": "exclude", "rows": rows[:1], "shown": rows})
    assert "Select a valid choice" in body.content.decode()  # exclude does not apply to proposed rows
    assert Evaluation.objects.filter(review_state=ReviewState.PROPOSED).count() == before


def test_a_claim_is_shown_to_the_other_curators_until_released(client, imported, curator, other_curator):
    client.force_login(other_curator)
    rows = shown_rows(client.get(url(imported)).content.decode())
    response = submit(client, imported, rows=rows, action="claim", every=True).content.decode()
    assert f"You claimed {len(rows)} row(s) for 60 minutes." in response
    client.force_login(curator)
    body = client.get(url(imported)).content.decode()
    assert body.count("claimed by curator-two until") == len(rows)
    response = submit(client, imported, rows=rows[:2], action="claim").content.decode()
    assert "You claimed 0 row(s)" in response and "2 row(s) stay claimed by curator-two." in response
    client.force_login(other_curator)
    assert (
        "You released your claim on 100 row(s)."
        in submit(client, imported, rows=rows, action="release", every=True).content.decode()
    )
    assert not ReviewClaim.objects.filter(released_at__isnull=True).exists()


def test_it_is_for_reviewers_only(client, imported, make_user):
    client.force_login(make_user("release_manager"))
    assert client.get(url(imported)).status_code == 403


def test_it_reads_a_page_in_the_same_number_of_statements_whatever_its_rows(client, imported, other_curator):
    client.force_login(other_curator)
    counts = []
    for protocol in ("gue-f1-x100-zhou-2024", "gue-mcc-x100-zhou-2024"):
        with CaptureQueriesContext(connection) as queries:
            body = client.get(url(imported, protocol=protocol)).content.decode()
        counts.append((len(shown_rows(body)), len(queries)))
    assert counts[0][0] != counts[1][0] and counts[0][1] == counts[1][1]
