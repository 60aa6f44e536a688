"""The review log on the record pages: every transition with its date, role, what it did and why."""

from __future__ import annotations

import html
import re

import pytest

from records.models import BaselineRole, EvidenceRow
from reviews.models import ReviewEvent
from reviews.services import review_transition_apply
from tests.factories import EvaluationFactory, ProtocolFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db


def page_text(response) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    assert response.status_code == 200
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))
    return re.sub(r" ([:.,])", r"\1", text)


def review_log(response) -> str:
    """The text of the page's "Review log" section."""
    found = re.search(r'<section class="review-log".*?</section>', response.content.decode(), re.S)
    assert found, "the page has no review log"
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", found.group(0))))
    return re.sub(r" ([:.,])", r"\1", text)  # "UTC</time>:" reads "UTC:"


def minute(event: ReviewEvent) -> str:
    return event.created_at.strftime("%Y-%m-%d %H:%M") + " UTC"


def test_it_lists_every_transition_of_an_evaluation_oldest_first_with_role_date_and_reason(
    client, curator, other_curator
):
    evaluation = EvaluationFactory()
    review_transition_apply(record=evaluation, transition="check_source", actor=curator)
    review_transition_apply(
        record=evaluation, transition="exclude", actor=other_curator, reason="The table reports a different split."
    )
    review_transition_apply(
        record=evaluation, transition="reinstate", actor=curator, reason="The erratum restores the split."
    )
    log = review_log(client.get(f"/evaluations/{evaluation.stable_id}/"))
    checked, excluded, reinstated = ReviewEvent.objects.order_by("id")
    assert (
        f"{minute(checked)}: Source checked, by a curator." in log
        and f"{minute(excluded)}: Excluded from comparison, by a curator. Reason: The table reports a different split."
        in log
        and f"{minute(reinstated)}: Reinstated in comparisons, by a curator. Reason: The erratum restores the split."
        in log
    )
    assert log.index("Source checked") < log.index("Excluded from comparison") < log.index("Reinstated")
    assert "3 transitions" in log


def test_it_names_the_person_only_where_the_setting_says(client, curator, settings):
    evaluation = EvaluationFactory()
    curator.first_name, curator.last_name = "Ada", "Lovelace"
    curator.save()
    review_transition_apply(record=evaluation, transition="check_source", actor=curator)
    url = f"/evaluations/{evaluation.stable_id}/"
    settings.PUBLIC_REVIEWER_NAMES = False
    hidden = review_log(client.get(url))
    assert "by a curator." in hidden and "Lovelace" not in hidden and curator.username not in hidden
    settings.PUBLIC_REVIEWER_NAMES = True  # part of the page cache's key: the page is rendered again
    assert "by Ada Lovelace, curator." in review_log(client.get(url))


def test_it_says_when_the_portal_applied_a_transition_itself(client):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source", reason="Checked while importing the example document.")
    log = review_log(client.get(f"/evaluations/{evaluation.stable_id}/"))
    assert (
        "Source checked, applied automatically by the portal (an import or the demo loader)."
        " Reason: Checked while importing the example document." in log
    )
    assert "by a portal" not in log


def test_it_says_a_record_has_no_transition_yet(client):
    evaluation = EvaluationFactory()
    assert "No review transition recorded for this record yet." in review_log(
        client.get(f"/evaluations/{evaluation.stable_id}/")
    )


def test_it_escapes_the_reason(client, curator):
    evaluation = EvaluationFactory()
    review_transition_apply(record=evaluation, transition="check_source", actor=curator)
    review_transition_apply(
        record=evaluation, transition="exclude", actor=curator, reason="<script>alert(1)</script> & more"
    )
    content = client.get(f"/evaluations/{evaluation.stable_id}/").content.decode()
    assert "<script>alert(1)</script>" not in content
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in content


def test_the_protocol_page_shows_its_own_log_and_each_rows_last_transition_not_every_evaluations_log(client, curator):
    protocol = ProtocolFactory()
    review_transition_apply(record=protocol, transition="check_source", actor=curator)
    review_transition_apply(record=protocol, transition="reopen", actor=curator, reason="The metric was renamed.")
    evaluations = [ResultFactory(evaluation__protocol=protocol).evaluation for _ in range(3)]
    for evaluation in evaluations:
        apply_transitions(evaluation, "check_source", "exclude", reason="An evaluation's own reason.")
    row = EvidenceRow.objects.create(
        stable_id="ev-row-1",
        protocol=protocol,
        property_name="metric",
        statement="MCC",
        source=protocol.source,
        locator="Table 2",
    )
    apply_transitions(row, "check_source")
    review_transition_apply(record=row, transition="exclude", actor=curator, reason="The locator names another table.")
    role = BaselineRole.objects.create(stable_id="bl-1", protocol=protocol, kind="null_control", selection_rule="r")
    review_transition_apply(record=role, transition="check_source", actor=curator)
    response = client.get(f"/protocols/{protocol.stable_id}/")
    log = review_log(response)
    assert "Source checked, by a curator." in log
    assert "Reopened: its source is to be checked again, by a curator. Reason: The metric was renamed." in log
    assert "An evaluation's own reason" not in log  # each evaluation's log is on its own page
    text = page_text(response)
    assert "Last transition" in text
    assert "excluded from comparison, by a curator. Reason: The locator names another table." in text
    excluded_row = ReviewEvent.objects.filter(record_stable_id="ev-row-1").order_by("id").last()
    assert f"Last transition {minute(excluded_row)}: excluded from comparison" in text
    assert "source checked, by a curator." in text  # the baseline role's last transition
    own = review_log(client.get(f"/evaluations/{evaluations[0].stable_id}/"))
    assert "Excluded from comparison, applied automatically by the portal" in own
    assert "An evaluation's own reason." in own


@pytest.mark.parametrize("transitions", [1, 30])
def test_the_log_is_read_in_one_query_whatever_its_length(client, curator, django_assert_max_num_queries, transitions):
    evaluation = EvaluationFactory()
    for _ in range(transitions):
        if evaluation.review_state == "proposed":
            apply_transitions(evaluation, "check_source")
        else:
            review_transition_apply(record=evaluation, transition="reopen", actor=curator, reason="again")
    url = f"/evaluations/{evaluation.stable_id}/"
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        text = review_log(client.get(url))
    log_queries = [q["sql"] for q in captured.captured_queries if "reviews_reviewevent" in q["sql"]]
    assert len(log_queries) == 1
    assert text.count("UTC:") == transitions
    from django.core.cache import cache

    cache.clear()
    with django_assert_max_num_queries(len(captured.captured_queries)):  # a longer log costs no query more
        client.get(url)
