"""A value and its quote agree, or a person says why not: on every save, at import, at the source
check (which shows the quote beside the value) and in the release build."""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from records.imports import records_import
from records.imports.document import ImportInvalid
from records.models import Evaluation, Result
from records.seed import seed_document
from records.services import record_save
from records.values import quote_value_problem
from reviews.models import ReviewState
from reviews.services import ReviewError, review_transition_apply
from tests.factories import EvaluationFactory, ResultFactory

pytestmark = pytest.mark.django_db

RESULT_500M = "nt-500m-ia3-finetune-runtime-dalla-torre-2025-runtime"
EVALUATION_500M = "nt-500m-ia3-finetune-runtime-dalla-torre-2025"


@pytest.mark.parametrize(
    ("value", "quote", "prints"),
    [
        ("20", "a fine-tuning run lasted 20 min", True),
        ("15", "a fine-tuning run lasted 20 min", False),
        ("0.410", "Table 2: 0.410 ± 0.02", True),
        ("0.41", "Table 2: 0.410 ± 0.02", False),  # the printed precision counts
        ("0.02", "Table 2: 0.410 ± 0.02", True),  # a spread is a number the quote prints
        ("3.00E+11", "trained on 300B tokens", True),  # scale words scale
        ("1024", "a context of 1,024 nt", True),
        ("7", "", True),  # no quote, nothing to contradict
    ],
)
def test_the_quote_prints_the_value_or_says_what_it_prints(value, quote, prints):
    problem = quote_value_problem(value=Decimal(value), quote=quote)
    assert (problem == "") is prints
    if not prints:
        assert problem.startswith(f"its quote does not print {value} (it prints ")


def test_a_save_of_a_value_its_quote_does_not_print_is_refused_naming_both(curator):
    result = ResultFactory(value=Decimal("0.5"), printed_value="0.5", evaluation__quote="MCC 0.5 on enhancers")
    result.value, result.printed_value = Decimal("0.6"), "0.6"
    with pytest.raises(ValidationError) as refused:
        record_save(record=result, actor=curator, changed_fields=["value", "printed_value"])
    assert refused.value.message_dict["value"][0].startswith("its quote does not print 0.6 (it prints 0.5)")
    assert Result.objects.get(pk=result.pk).value == Decimal("0.5")
    result.quote_mismatch_reason = "The quote is the preprint's row; the journal table prints 0.6."
    record_save(record=result, actor=curator, changed_fields=["value", "printed_value", "quote_mismatch_reason"])
    assert Result.objects.get(pk=result.pk).value == Decimal("0.6")


def test_a_new_quote_that_no_longer_prints_a_stored_value_is_refused(curator):
    result = ResultFactory(value=Decimal("0.5"), printed_value="0.5", evaluation__quote="MCC 0.5 on enhancers")
    evaluation = result.evaluation
    evaluation.quote = "MCC 0.7 on enhancers"
    with pytest.raises(ValidationError) as refused:
        record_save(record=evaluation, actor=curator, changed_fields=["quote"])
    assert f"{result.stable_id}: its quote does not print 0.5 (it prints 0.7)" in refused.value.message_dict["quote"][0]
    # a digitised plot's value is not printed in its quote
    evaluation.reading_method = "digitised_plot"
    record_save(record=evaluation, actor=curator, changed_fields=["quote", "reading_method"])


def test_the_admin_saves_a_quote_and_a_value_corrected_together(client, curator):
    """The inline's results are checked against the quote as edited, not as stored."""
    result = ResultFactory(value=Decimal("0.5"), printed_value="0.5", evaluation__quote="MCC 0.5 on enhancers")
    evaluation = Evaluation.objects.get(pk=result.evaluation_id)
    client.force_login(curator)
    url = reverse("admin:records_evaluation_change", args=[evaluation.pk])
    form = client.get(url).context["adminform"].form
    data = {name: form[name].value() or "" for name in form.fields if form[name].value() is not None}
    data.update(
        {
            "quote": "MCC 0.7 on enhancers",
            "results-TOTAL_FORMS": "1",
            "results-INITIAL_FORMS": "1",
            "results-MIN_NUM_FORMS": "0",
            "results-MAX_NUM_FORMS": "1000",
            "results-0-id": str(result.pk),
            "results-0-evaluation": str(evaluation.pk),
            "results-0-stable_id": result.stable_id,
            "results-0-value": "0.7",
            "results-0-unit": result.unit,
            "results-0-printed_value": "0.7",
            "results-0-relation": "absolute",
            "results-0-quote_mismatch_reason": "",
        }
    )
    saved = client.post(url, data)
    assert saved.status_code == 302, saved.context["errors"] if saved.context else saved
    assert Result.objects.get(pk=result.pk).value == Decimal("0.7")
    data["results-0-value"], data["results-0-printed_value"] = "0.8", "0.8"
    refused = client.post(url, data)
    assert refused.status_code == 200
    assert "its quote does not print 0.8 (it prints 0.7)" in refused.content.decode()
    assert Result.objects.get(pk=result.pk).value == Decimal("0.7")


def test_the_source_check_shows_the_quote_and_needs_a_reason_where_it_contradicts_the_value(
    client, curator, other_curator
):
    result = ResultFactory(value=Decimal("0.5"), printed_value="0.5", evaluation__quote="MCC 0.5 on enhancers")
    Result.objects.filter(pk=result.pk).update(value="0.6", printed_value="0.6")  # as a legacy row or raw SQL would
    evaluation = Evaluation.objects.get(pk=result.evaluation_id)
    client.force_login(other_curator)
    page = client.get(reverse("admin:records_evaluation_change", args=[evaluation.pk])).content.decode()
    panel = page[page.index('id="review-panel"') :]
    assert "MCC 0.5 on enhancers" in panel and "Contradicts the quote: its quote does not print 0.6" in panel
    with pytest.raises(ReviewError, match="'Check source' needs a reason here: .*its quote does not print 0.6"):
        review_transition_apply(record=evaluation, transition="check_source", actor=other_curator)
    assert Evaluation.objects.get(pk=evaluation.pk).review_state == ReviewState.PROPOSED
    event = review_transition_apply(
        record=evaluation, transition="check_source", actor=other_curator, reason="The journal table prints 0.6."
    )
    assert event.reason == "The journal table prints 0.6."


def test_an_import_refuses_a_value_its_quote_does_not_print_unless_it_says_why():
    document = copy.deepcopy(seed_document())
    row = next(e for e in document["evaluations"] if e["stable_id"] == EVALUATION_500M)
    row["results"][0].update(value="15", printed_value="15 min")
    with pytest.raises(ImportInvalid) as refused:
        records_import(document=document, actor=None)
    assert "its quote does not print 15 (it prints 20, 500M, 50, 2.5B)" in str(refused.value)
    assert not Result.objects.exists()
    row["results"][0]["quote_mismatch_reason"] = "The Discussion's single-GPU figure."
    records_import(document=document, actor=None)
    assert Result.objects.get(stable_id=RESULT_500M).value == Decimal("15")


def test_an_import_checks_a_changed_quote_against_the_stored_values(seeded):
    document = copy.deepcopy(seed_document())
    row = next(e for e in document["evaluations"] if e["stable_id"] == EVALUATION_500M)
    row["quote"] = "On average, a fine-tuning run lasted 25 min."
    with pytest.raises(ImportInvalid) as refused:
        records_import(document=document, actor=None, overwrite={f"evaluations/{EVALUATION_500M}"})
    assert "results[0].value: its quote does not print 20 (it prints 25)" in str(refused.value)


def test_a_proposed_record_is_refused_with_a_reason_by_another_curator(curator, other_curator):
    evaluation = EvaluationFactory(last_edited_by=curator)
    with pytest.raises(ReviewError, match="needs a reason"):
        review_transition_apply(record=evaluation, transition="refuse", actor=other_curator)
    with pytest.raises(ReviewError, match="four-eyes rule"):
        review_transition_apply(record=evaluation, transition="refuse", actor=curator, reason="Out of scope.")
    event = review_transition_apply(
        record=evaluation, transition="refuse", actor=other_curator, reason="Out of scope: a protein benchmark."
    )
    evaluation.refresh_from_db()
    assert (event.from_state, event.to_state) == (ReviewState.PROPOSED, ReviewState.EXCLUDED_RECHECK)
    assert evaluation.concern == "Out of scope: a protein benchmark." and not evaluation.is_comparable
    # its source was never checked: the way back is a second curator's reasoned decision
    assert {option.name for option in review_options_of(evaluation, other_curator)} == {"recheck", "reinstate"}


def test_the_admin_offers_the_refusal_on_a_proposed_record(client, curator, other_curator):
    evaluation = EvaluationFactory(last_edited_by=curator)
    client.force_login(other_curator)
    page = client.get(reverse("admin:records_evaluation_change", args=[evaluation.pk])).content.decode()
    assert 'value="refuse"' in page and "Refuse (exclude unchecked)" in page
    client.post(
        reverse("admin:records_evaluation_transition", args=[evaluation.pk]),
        {"transition": "refuse", "reason": "A duplicate row of Table 2.", "expected_state": "proposed"},
    )
    assert Evaluation.objects.get(pk=evaluation.pk).review_state == ReviewState.EXCLUDED_RECHECK


def review_options_of(record, user):
    from reviews.services import review_options

    return review_options(record=record, user=user)
