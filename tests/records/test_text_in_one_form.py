"""record_save stores text in common.text's form and counts a field as edited only when its text in
that form changed: the admin names every textarea a browser sent with CRLF as changed."""

from __future__ import annotations

import pytest
from django.db import connection

from records.models import Evaluation
from records.services import record_save
from reviews.models import ReviewEvent, ReviewState
from tests.factories import EvaluationFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = pytest.mark.django_db

QUOTE = "First line.\nSecond line."


def checked_evaluation(**fields) -> Evaluation:
    evaluation = EvaluationFactory(quote=QUOTE, **fields)
    apply_transitions(evaluation, "check_source")
    return Evaluation.objects.get(pk=evaluation.pk)


def test_a_field_named_changed_whose_text_differs_only_in_line_endings_is_no_edit(curator):
    evaluation = checked_evaluation()
    rows = evaluation.history.count()
    evaluation.quote, evaluation.title = QUOTE.replace("\n", "\r\n"), "A clearer title"
    assert record_save(record=evaluation, actor=curator, changed_fields=["quote", "title"])
    saved = Evaluation.objects.get(pk=evaluation.pk)
    assert (saved.quote, saved.title, saved.review_state) == (QUOTE, "A clearer title", ReviewState.SOURCE_CHECKED)
    assert saved.history.count() == rows + 1 and saved.history.first().history_change_reason == "edited: title"
    assert list(ReviewEvent.objects.values_list("transition", flat=True)) == ["check_source"]


def test_a_save_whose_only_named_change_is_line_endings_writes_nothing(curator):
    evaluation = checked_evaluation()
    rows = evaluation.history.count()
    evaluation.quote = "\r\n" + QUOTE.replace("\n", "\r") + "\r\n"
    assert record_save(record=evaluation, actor=curator, changed_fields=["quote"]) is False
    saved = Evaluation.objects.get(pk=evaluation.pk)
    assert (saved.history.count(), saved.review_state, saved.last_edited_by) == (rows, ReviewState.SOURCE_CHECKED, None)


def test_a_text_stored_in_another_form_is_no_edit_when_saved_in_its_canonical_form(curator):
    evaluation = checked_evaluation()
    with connection.cursor() as cursor:  # as an import stored it before common.text's rule
        cursor.execute("UPDATE records_evaluation SET quote = %s WHERE id = %s", [QUOTE + "\r\n", evaluation.pk])
    evaluation.refresh_from_db()
    evaluation.quote = evaluation.quote.strip()  # the admin's form trims a text
    assert record_save(record=evaluation, actor=curator, changed_fields=["quote"]) is False
    assert Evaluation.objects.get(pk=evaluation.pk).review_state == ReviewState.SOURCE_CHECKED


def test_a_result_s_printed_value_differing_only_in_surrounding_whitespace_is_no_edit(curator):
    result = ResultFactory()
    apply_transitions(result.evaluation, "check_source")
    rows = result.history.count()
    result.printed_value = f" {result.printed_value}\r\n"
    assert record_save(record=result, actor=curator, changed_fields=["printed_value"]) is False
    assert result.history.count() == rows
    assert Evaluation.objects.get(pk=result.evaluation_id).review_state == ReviewState.SOURCE_CHECKED


def test_a_new_record_is_stored_with_lf(curator):
    other = EvaluationFactory()
    evaluation = Evaluation(
        stable_id="a-new-evaluation",
        title="A new evaluation\r\n",
        protocol=other.protocol,
        configuration=other.configuration,
        dataset=other.dataset,
        measured_by=other.measured_by,
        reading_method=other.reading_method,
        source=other.source,
        quote="a\r\nb\rc",
        setup="\tone GPU\r\n",
    )
    assert record_save(record=evaluation, actor=curator)
    saved = Evaluation.objects.get(pk=evaluation.pk)
    assert (saved.title, saved.quote, saved.setup) == ("A new evaluation", "a\nb\nc", "one GPU")
