"""Text sent through the API or an import document with CR or CRLF line endings is stored with LF,
and a write that differs from the record only in line endings is no edit (no history, no reopen)."""

from __future__ import annotations

import copy

import pytest

from records.models import Evaluation, Limitation
from records.seed import seed_document
from reviews.models import ReviewEvent, ReviewState
from tests.factories import EvaluationFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db

QUOTE = "First line of the quote.\nSecond line.\n\nA paragraph after a blank line."


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def checked_evaluation() -> Evaluation:
    evaluation = EvaluationFactory(quote=QUOTE)
    apply_transitions(evaluation, "check_source")
    return Evaluation.objects.get(pk=evaluation.pk)


def test_a_patch_that_differs_only_in_line_endings_is_no_edit(token_client):
    evaluation = checked_evaluation()
    rows = evaluation.history.count()
    response = token_client("curator").patch(
        f"/api/v1/evaluations/{evaluation.stable_id}/", {"quote": crlf(QUOTE)}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["quote"] == QUOTE and response.json()["review_state"] == ReviewState.SOURCE_CHECKED
    saved = Evaluation.objects.get(pk=evaluation.pk)
    assert saved.quote.encode() == QUOTE.encode()
    assert (saved.review_state, saved.history.count()) == (ReviewState.SOURCE_CHECKED, rows)
    assert list(ReviewEvent.objects.values_list("transition", flat=True)) == ["check_source"]


def test_a_patch_with_crlf_and_lone_cr_line_endings_stores_lf(token_client):
    evaluation = checked_evaluation()
    sent = "New first line.\r\nSecond line.\rThird line."
    response = token_client("curator").patch(
        f"/api/v1/evaluations/{evaluation.stable_id}/", {"quote": sent, "setup": "one GPU\r\ntwo nodes"}, format="json"
    )
    assert response.status_code == 200, response.content
    saved = Evaluation.objects.get(pk=evaluation.pk)
    assert (saved.quote, saved.setup) == ("New first line.\nSecond line.\nThird line.", "one GPU\ntwo nodes")
    assert saved.review_state == ReviewState.PROPOSED  # the quote's words changed: a sourced edit
    assert saved.history.filter(history_change_reason="API").count() == 1
    assert ReviewEvent.objects.last().reason == "edited: quote (API)"


def test_a_protocol_s_limitations_sent_with_crlf_are_stored_with_lf_and_resending_them_changes_nothing(token_client):
    client = token_client("curator")
    evaluation = checked_evaluation()
    url = f"/api/v1/protocols/{evaluation.protocol.stable_id}/"
    assert client.patch(url, {"limitations": ["one\r\ntwo", "three"]}, format="json").status_code == 200
    assert list(evaluation.protocol.limitations.order_by("position").values_list("text", flat=True)) == [
        "one\ntwo",
        "three",
    ]
    rows = Limitation.history.count()
    assert client.patch(url, {"limitations": ["one\ntwo", "three\r\n"]}, format="json").status_code == 200
    assert Limitation.history.count() == rows


def seed_with_quotes(line_ending: str) -> dict:
    """The seed document with a multi-line quote on every evaluation, its lines ending in `line_ending`."""
    document = copy.deepcopy(seed_document())
    for evaluation in document["evaluations"]:
        evaluation["quote"] = line_ending.join([evaluation["quote"], "", "A second paragraph.", ""])
    return document


def test_an_import_document_with_crlf_text_stores_lf(token_client):
    document = seed_with_quotes("\r\n")
    for evaluation in document["evaluations"]:
        evaluation["setup"] = "IA3 fine-tuning,\r\none node of eight A100 GPUs"
    response = token_client("curator").post("/api/v1/imports/", document, format="json")
    assert response.status_code == 201, response.content
    for sent in document["evaluations"]:
        saved = Evaluation.objects.get(stable_id=sent["stable_id"])
        assert saved.quote == sent["quote"].replace("\r\n", "\n").strip() and "\r" not in saved.quote
        assert saved.setup == "IA3 fine-tuning,\none node of eight A100 GPUs"


def test_reimporting_a_document_that_differs_only_in_line_endings_changes_nothing(token_client):
    client = token_client("curator")
    assert client.post("/api/v1/imports/", seed_with_quotes("\n"), format="json").status_code == 201
    rows = Evaluation.history.count()
    for line_ending in ("\r\n", "\r", "\n"):
        again = client.post("/api/v1/imports/", seed_with_quotes(line_ending), format="json")
        assert again.status_code == 200, again.content
        report = again.json()
        assert (report["updated"], report.get("conflicts", {}), report.get("kept", {})) == ({}, {}, {}), line_ending
    assert Evaluation.history.count() == rows
