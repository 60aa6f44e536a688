"""A suggestion sent from the public form (whose textareas browsers send with CRLF line endings) is
stored with LF, and an accepted suggestion's text reaches the record with LF; one that differs from
the record only in line endings changes nothing."""

from __future__ import annotations

import time
from unittest import mock

import pytest
from django.urls import reverse

from corrections.forms import timing_stamp
from corrections.models import Correction
from records.models import Evaluation
from records.services import record_upsert
from reviews.models import ReviewEvent, ReviewState

pytestmark = pytest.mark.django_db

EVALUATION = "nt-500m-ia3-finetune-runtime-dalla-torre-2025"


def suggest_quote(client, quote: str) -> Correction:
    with mock.patch("time.time", return_value=time.time() - 10):
        started = timing_stamp()
    response = client.post(
        "/corrections/new/",
        {
            "record": f"evaluation:{EVALUATION}",
            "target": f"evaluation:{EVALUATION}:quote",
            "proposed_value": quote,
            "explanation": "The paper's Methods section says it\r\nin two sentences.",
            "supporting_source": "https://pmc.ncbi.nlm.nih.gov/articles/PMC11810778/",
            "supporting_locator": "Methods,\r\nHardware",
            "contact_email": "",
            "website": "",
            "started": started,
        },
    )
    assert response.status_code == 302, response.context["form"].errors
    return Correction.objects.latest("pk")


def accept(client, curator, correction: Correction) -> None:
    client.force_login(curator)
    response = client.post(
        reverse("admin:corrections_correction_decide", args=[correction.pk]),
        {"decision": "accept", "response": "Quoted in full.\r\nThank you.", "apply_value": "1"},
    )
    assert response.status_code == 302


def test_an_accepted_quote_sent_with_crlf_is_stored_with_lf(client, seeded, curator):
    correction = suggest_quote(client, "On average, a run lasted 20 min.\r\n\r\nEach used one node.")
    assert correction.proposed_value == "On average, a run lasted 20 min.\n\nEach used one node."
    assert (correction.explanation, correction.supporting_locator) == (
        "The paper's Methods section says it\nin two sentences.",
        "Methods,\nHardware",
    )
    accept(client, curator, correction)
    evaluation = Evaluation.objects.get(stable_id=EVALUATION)
    assert evaluation.quote.encode() == b"On average, a run lasted 20 min.\n\nEach used one node."
    assert evaluation.review_state == ReviewState.EXCLUDED_RECHECK  # a new quote: the review must see it
    correction.refresh_from_db()
    assert (correction.status, correction.value_applied, correction.response) == (
        "accepted",
        True,
        "Quoted in full.\nThank you.",
    )


def test_an_accepted_quote_that_differs_only_in_line_endings_changes_nothing(client, seeded, curator):
    evaluation = Evaluation.objects.get(stable_id=EVALUATION)
    record_upsert(
        record=evaluation, values={"quote": "First line: 20 min.\nSecond line."}, actor=curator, reason="test"
    )
    evaluation.refresh_from_db()
    rows, events = evaluation.history.count(), ReviewEvent.objects.count()
    correction = suggest_quote(client, "First line: 20 min.\r\nSecond line.\r\n")
    accept(client, curator, correction)
    saved = Evaluation.objects.get(stable_id=EVALUATION)
    assert saved.quote.encode() == b"First line: 20 min.\nSecond line."
    assert (saved.history.count(), ReviewEvent.objects.count()) == (rows, events)
    assert saved.review_state == evaluation.review_state
    assert Correction.objects.get(pk=correction.pk).status == "accepted"
