"""The review panel, bulk transitions and review queue in the admin."""

from __future__ import annotations

import re

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from records.models import Evaluation, Source
from reviews.models import ReviewEvent, ReviewState
from tests.factories import EvaluationFactory, ProtocolFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db


def buttons(response) -> list[str]:
    return re.findall(r'name="transition" value="([a-z_]+)"', response.content.decode())


def test_it_offers_buttons_for_the_legal_transitions_only(client, curator):
    evaluation = EvaluationFactory()
    client.force_login(curator)
    change = reverse("admin:records_evaluation_change", args=[evaluation.pk])
    assert buttons(client.get(change)) == ["check_source", "refuse"]
    apply_transitions(evaluation, "check_source")
    assert buttons(client.get(change)) == ["exclude", "reopen"]
    apply_transitions(evaluation, "exclude")
    assert buttons(client.get(change)) == ["reinstate", "reopen_excluded"]


def test_it_names_each_transition_needing_a_reason_once_in_the_reason_label(client, curator, settings):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source", "exclude")
    client.force_login(curator)
    body = client.get(reverse("admin:records_evaluation_change", args=[evaluation.pk])).content.decode()
    [label] = re.findall(r'<label for="review-reason">([^<]*)</label>', body)
    assert label.count("required for") == 1 and "reinstate" in label and "reopen" in label
    # the admin carries the portal's name
    index = client.get(reverse("admin:index")).content.decode()
    assert settings.PORTAL_SITE_NAME in index and "Django administration" not in index


def test_it_applies_a_transition_from_the_panel_and_shows_it_in_the_review_log(client, curator):
    evaluation = EvaluationFactory()
    client.force_login(curator)
    url = reverse("admin:records_evaluation_transition", args=[evaluation.pk])
    client.post(url, {"transition": "check_source", "reason": "", "expected_state": "proposed"})
    client.post(url, {"transition": "exclude", "reason": "Numbers conflict.", "expected_state": "source_checked"})
    evaluation.refresh_from_db()
    assert (evaluation.review_state, evaluation.concern) == (ReviewState.EXCLUDED, "Numbers conflict.")
    page = client.get(reverse("admin:records_evaluation_change", args=[evaluation.pk])).content.decode()
    assert "Review: Excluded from comparison" in page and "Numbers conflict." in page
    assert page.count("<td>exclude</td>") == 1 and page.count("<td>check_source</td>") == 1


def test_it_reports_a_conflict_when_another_curator_acted_first(client, curator, other_curator):
    evaluation = EvaluationFactory()
    url = reverse("admin:records_evaluation_transition", args=[evaluation.pk])
    client.force_login(other_curator)
    client.post(url, {"transition": "check_source", "expected_state": "proposed"})
    client.force_login(curator)
    response = client.post(url, {"transition": "check_source", "expected_state": "proposed"})
    text = [str(message) for message in get_messages(response.wsgi_request)]
    assert any("Nothing changed: the record changed meanwhile: it is source checked now" in t for t in text)
    assert ReviewEvent.objects.filter(transition="check_source").count() == 1


def test_it_names_the_missing_reason(client, curator):
    evaluation = EvaluationFactory()
    apply_transitions(evaluation, "check_source")
    client.force_login(curator)
    response = client.post(
        reverse("admin:records_evaluation_transition", args=[evaluation.pk]), {"transition": "exclude", "reason": ""}
    )
    assert any("needs a reason" in str(message) for message in get_messages(response.wsgi_request))
    assert Evaluation.objects.get(pk=evaluation.pk).review_state == ReviewState.SOURCE_CHECKED


def test_it_applies_a_bulk_action_one_record_at_a_time_and_reports_what_failed(client, curator):
    proposed = [EvaluationFactory() for _ in range(2)]
    checked = EvaluationFactory()
    apply_transitions(checked, "check_source")
    client.force_login(curator)
    ids = [str(e.pk) for e in proposed + [checked]]
    response = client.post(
        reverse("admin:records_evaluation_changelist"),
        {"action": "bulk_check_source", "_selected_action": ids, "reason": ""},
        follow=True,
    )
    text = " ".join(str(message) for message in response.context["messages"])
    assert "Check source: applied to 2 record(s)." in text
    assert (
        f"Check source: 1 refused. {checked.stable_id}: 'Check source' does not apply: the record is source checked now"
        in text
    )
    assert ReviewEvent.objects.filter(transition="check_source").count() == 3  # 1 from set-up + 2


def test_it_uses_the_reason_of_the_action_bar_for_a_bulk_exclusion(client, curator):
    evaluations = [EvaluationFactory() for _ in range(3)]
    for evaluation in evaluations:
        apply_transitions(evaluation, "check_source")
    client.force_login(curator)
    client.post(
        reverse("admin:records_evaluation_changelist"),
        {"action": "bulk_exclude", "_selected_action": [e.pk for e in evaluations], "reason": "Same flawed split."},
    )
    assert set(Evaluation.objects.values_list("concern", flat=True)) == {"Same flawed split."}


def test_it_lists_proposed_records_oldest_first_filterable_by_type_and_protocol(client, curator):
    protocol = ProtocolFactory()
    first = EvaluationFactory(protocol=protocol)
    second = EvaluationFactory()
    apply_transitions(protocol, "check_source")
    apply_transitions(second.protocol, "check_source")
    checked = EvaluationFactory(protocol=protocol)
    apply_transitions(checked, "check_source")
    client.force_login(curator)
    body = client.get(reverse("review-queue")).content.decode()
    assert body.index(first.stable_id) < body.index(second.stable_id)
    assert checked.stable_id not in body
    body = client.get(reverse("review-queue"), {"type": "evaluation", "protocol": protocol.stable_id}).content.decode()
    assert first.stable_id in body and second.stable_id not in body
    assert "1 proposed record," in body


def test_it_keeps_the_review_queue_from_other_roles(client, make_user):
    client.force_login(make_user("release_manager"))
    assert client.get(reverse("review-queue")).status_code == 403


def test_it_says_beside_each_button_why_a_transition_is_not_yours_to_apply(client, curator, make_user):
    evaluation = EvaluationFactory()
    evaluation.last_edited_by = curator  # as record_save writes it when a curator edits
    evaluation.save(update_fields=["last_edited_by"])
    client.force_login(curator)
    body = client.get(reverse("admin:records_evaluation_change", args=[evaluation.pk])).content.decode()
    assert buttons(client.get(reverse("admin:records_evaluation_change", args=[evaluation.pk]))) == []
    assert "Check source</button>" in body and "disabled" in body
    assert "Not available to you: four-eyes rule: you edited this record last" in body
    apply_transitions(evaluation, "check_source")
    client.force_login(make_user("benchmark_operator"))
    body = client.get(reverse("admin:records_evaluation_change", args=[evaluation.pk])).content.decode()
    assert "Not available to you: you do not have permission to &#x27;exclude from comparison&#x27;." in body


def test_the_queue_dates_a_record_from_its_last_review_transition_and_orders_by_it(client, curator, other_curator):
    older = EvaluationFactory()
    reopened = EvaluationFactory()
    apply_transitions(reopened, "check_source")
    reopened.refresh_from_db()
    created = reopened.created_at
    from reviews.services import review_transition_apply

    review_transition_apply(record=reopened, transition="reopen", actor=other_curator, reason="Table 4 was revised.")
    reopened.refresh_from_db()
    assert reopened.review_state_changed_at > created
    client.force_login(curator)
    body = client.get(reverse("review-queue")).content.decode()
    assert body.index(older.stable_id) < body.index(reopened.stable_id)  # oldest first: the reopen is newer
    assert reopened.review_state_changed_at.strftime("%Y-%m-%d %H:%M") in body
    newest = client.get(reverse("review-queue"), {"order": "newest"}).content.decode()
    assert newest.index(reopened.stable_id) < newest.index(older.stable_id)


def test_the_queue_counts_what_waits_by_source_and_protocol_and_links_the_sources_table(client, curator):
    protocol = ProtocolFactory()
    source = Source.objects.create(stable_id="queue-source", title="A paper with a table")
    for _ in range(3):
        EvaluationFactory(protocol=protocol, source=source)
    EvaluationFactory(protocol=protocol)
    client.force_login(curator)
    body = client.get(reverse("review-queue")).content.decode()
    by_source = body.split('id="waiting-by-source"', 1)[1].split("</table>", 1)[0]
    assert re.search(r"A paper with a table</a></td><td>3</td>", by_source)
    assert reverse("admin:records_source_review_table", args=[source.pk]) in by_source
    by_protocol = body.split('id="waiting-by-protocol"', 1)[1].split("</table>", 1)[0]
    assert re.search(rf"{re.escape(str(protocol))}</a></td><td>4</td>", by_protocol)
