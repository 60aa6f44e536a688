"""Exclusion is sticky, on a real conflict: HyenaDNA's self-reported enhancer MCC (62.6, Nguyen et al.
2023 Table 4.2) is excluded (its own split, no seeds; the leaderboard's re-measurement is common
protocol). No edit of it, through the admin, the API, a re-import, an accepted correction or an edit
of its result, makes it comparable or hides its concern: only `reinstate`, with a reason, by a
curator other than its last editor, does."""

from __future__ import annotations

import copy
import html
import re

import pytest
from django.forms.models import model_to_dict
from rest_framework.test import APIClient

from corrections.services import correction_decide, correction_submit
from portal.tokens import api_token_create
from records.examples import EXAMPLES_DIR, example_document
from records.imports import records_import
from records.models import Evaluation, Result
from reviews.models import ReviewEvent, ReviewState
from reviews.services import TransitionConflict, TransitionForbidden, review_transition_apply
from tests.helpers import load_for_module

pytestmark = pytest.mark.django_db

DOCUMENT = "02-nt-benchmark-hyenadna-caduceus"
EXCLUDED = "hyena-t42-hyenadna-1-6m-ft-ntv1-enhancers"
PROTOCOL = "ntv1-mcc-x100"
TASK = "ntv1-enhancers"


def enhancer_column(client, **params) -> str:
    """The enhancer task's column of the protocol's matrix, as the public page shows it."""
    response = client.get(f"/protocols/{PROTOCOL}/", {"dataset": TASK, **params})
    assert response.status_code == 200
    table = (
        response.content.decode()
        .split(
            '<table class="results matrix">'
            if 'class="results matrix"' in response.content.decode()
            else '<table class="results">'
        )[1]
        .split("</table>")[0]
    )
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", table)))


def best_configurations(client) -> set[str]:
    """The configurations (stable ids) the enhancer task's table marks best."""
    response = client.get(f"/protocols/{PROTOCOL}/", {"dataset": TASK})
    table = response.content.decode().split('<table class="results">')[1].split("</table>")[0]
    return {
        re.search(r'<th scope="row"><a href="/configurations/([^/]+)/"', row).group(1)
        for row in table.split("<tr")[1:]
        if "(best in column" in row
    }


TIED_BEST = {"hyena-nt-2-5b-3202-genomes", "hyena-gpt-1-6m-ft"}  # 59.3 each; HyenaDNA's 62.6 is excluded


@pytest.fixture(scope="module")
def loaded(demo_snapshot, module_transaction):
    """The seed and the example papers (the document among them), put in once for the module from the
    session's demo snapshot: each test edits in its own savepoint."""
    load_for_module(module_transaction, demo=demo_snapshot)


@pytest.fixture
def conflict(loaded):
    evaluation = Evaluation.objects.get(stable_id=EXCLUDED)
    assert evaluation.review_state == ReviewState.EXCLUDED and evaluation.concern.startswith(
        "Self-reported by the HyenaDNA authors"
    )
    return evaluation


def edit_in_the_admin(client, curator, evaluation):
    client.force_login(curator)
    data = {k: ("" if v is None else v) for k, v in model_to_dict(evaluation).items() if k != "id"}
    data.update(
        {"source_locator": "Table 4.2, row 'Enhancer' (re-read)", "results-TOTAL_FORMS": 0, "results-INITIAL_FORMS": 0}
    )
    response = client.post(f"/admin/records/evaluation/{evaluation.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]


def edit_through_the_api(client, curator, evaluation):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=curator)}")
    response = api.patch(
        f"/api/v1/evaluations/{evaluation.stable_id}/", {"source_locator": "Table 4.2 (API edit)"}, format="json"
    )
    assert response.status_code == 200, response.content


def reimport_with_a_changed_locator(client, curator, evaluation):
    """The issue's own case: the document's next version changes the excluded row's locator."""
    document = copy.deepcopy(example_document(EXAMPLES_DIR / f"{DOCUMENT}.json"))
    row = next(e for e in document["evaluations"] if e["stable_id"] == EXCLUDED)
    row["source_locator"] = "Table 4.2, row 'Enhancer', column 'HyenaDNA 1.6M' (arXiv v3)"
    report = records_import(document=document, actor=curator)
    assert report.updated["evaluations"] == {EXCLUDED: ["source_locator"]}


def accept_a_correction(client, curator, evaluation):
    result = evaluation.results.get()
    suggestion = correction_submit(
        target=result,
        field_name="value",
        proposed_value="62.7",
        explanation="The table prints 62.7.",
        supporting_source="",
        supporting_locator="",
        contact_email="",
        ip="192.0.2.7",
    )
    correction_decide(
        correction=suggestion,
        actor=curator,
        decision="accept",
        response="Checked.",
        apply_value=True,
        quote_reason="A test of stickiness.",
    )
    assert Result.objects.get(pk=result.pk).printed_value == "62.7"


def edit_its_result(client, curator, evaluation):
    result = evaluation.results.get()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=curator)}")
    response = api.patch(
        f"/api/v1/results/{result.stable_id}/",
        {"value": "62.60", "printed_value": "62.60", "quote_mismatch_reason": "Printed to two places elsewhere."},
        format="json",
    )
    assert response.status_code == 200, response.content


PATHS = [edit_in_the_admin, edit_through_the_api, reimport_with_a_changed_locator, accept_a_correction, edit_its_result]


@pytest.mark.parametrize("edit", PATHS, ids=[path.__name__ for path in PATHS])
def test_no_edit_makes_an_excluded_row_comparable(client, conflict, curator, other_curator, edit):
    assert best_configurations(client) == TIED_BEST
    edit(client, curator, conflict)
    conflict.refresh_from_db()
    assert conflict.review_state == ReviewState.EXCLUDED_RECHECK
    assert conflict.concern.startswith("Self-reported by the HyenaDNA authors")
    column = enhancer_column(client)
    assert "Excluded from comparison (edited since; re-check pending): Self-reported by the HyenaDNA authors" in column
    evaluation_page = client.get(f"/evaluations/{EXCLUDED}/").content.decode()
    assert (
        "Source checked, excluded from comparison, then edited: re-check pending" in evaluation_page
        and "Evidence concern: excluded from comparisons" in evaluation_page
    )
    assert best_configurations(client) == TIED_BEST
    assert APIClient().get(f"/api/v1/evaluations/{EXCLUDED}/").json()["comparable"] is False
    # The review log shows the edit and that the row stays out.
    event = ReviewEvent.objects.filter(record_stable_id=EXCLUDED).last()
    assert (event.transition, event.from_state, event.to_state) == ("reopen_excluded", "excluded", "excluded_recheck")
    # A source check cannot bring it back; the re-check keeps it excluded.
    with pytest.raises(TransitionConflict):
        review_transition_apply(record=conflict, transition="check_source", actor=other_curator)
    review_transition_apply(
        record=conflict,
        transition="recheck",
        actor=other_curator,
        reason="Checked; the quote is the row before the edit.",
    )
    conflict.refresh_from_db()
    assert (conflict.review_state, conflict.is_comparable) == (ReviewState.EXCLUDED, False)
    assert best_configurations(client) == TIED_BEST


def test_only_a_reinstate_by_another_curator_brings_it_back(client, conflict, curator, other_curator):
    edit_through_the_api(client, curator, conflict)
    with pytest.raises(TransitionForbidden, match="four-eyes"):
        review_transition_apply(
            record=conflict, transition="reinstate", actor=curator, reason="The split is fine after all."
        )
    review_transition_apply(
        record=conflict, transition="reinstate", actor=other_curator, reason="Re-measured on the common split."
    )
    conflict.refresh_from_db()
    assert (conflict.review_state, conflict.concern, conflict.is_comparable) == (ReviewState.SOURCE_CHECKED, "", True)
    assert best_configurations(client) == {"hyena-hyenadna-1-6m-ft"}


def test_including_excluded_rows_shows_their_effect_without_reinstating_them(client, conflict):
    response = client.get(f"/protocols/{PROTOCOL}/", {"dataset": TASK, "include": "excluded"})
    table = response.content.decode().split('<table class="results">')[1].split("</table>")[0]
    best = [row for row in table.split("<tr")[1:] if "(best in column, excluded rows included)" in row]
    assert (
        len(best) == 1
        and "/configurations/hyena-hyenadna-1-6m-ft/" in best[0]
        and "Excluded from comparison" in best[0]
    )
    conflict.refresh_from_db()
    assert conflict.review_state == ReviewState.EXCLUDED
