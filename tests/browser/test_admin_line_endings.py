"""A curator saves an evaluation's change form in the real browser, which sends its textareas with
CRLF line endings: a multi-line quote keeps its bytes, and only the field the curator changed is an
edit (history, review state, review log)."""

from __future__ import annotations

import itertools
import re

import pytest

from records.models import Evaluation
from reviews.models import ReviewEvent, ReviewState
from tests.browser.conftest import admin_login
from tests.factories import EvaluationFactory, ResultFactory
from tests.helpers import apply_transitions

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUOTE = "Table 2 reports the runtime: 1 h.\nEach run used one A100 GPU.\n\nTimes are means over three runs."


def _source_checked_evaluation() -> Evaluation:
    evaluation = ResultFactory(evaluation=EvaluationFactory(quote=QUOTE, source_locator="Table 2")).evaluation
    apply_transitions(evaluation, "check_source")
    return Evaluation.objects.get(pk=evaluation.pk)


def _save_and_continue(page, evaluation: Evaluation, field: str, value: str) -> None:
    page.goto(f"/admin/records/evaluation/{evaluation.pk}/change/")
    page.fill(f"#id_{field}", value)
    page.locator("input[name=_continue]").first.click()
    page.wait_for_selector("text=was changed successfully")


def _changes_on_the_history_page(page, evaluation: Evaluation, reason: str) -> list[str]:
    """The fields the admin's history page lists as changed in the row whose change reason is `reason`."""
    page.goto(f"/admin/records/evaluation/{evaluation.pk}/history/")
    cell = page.locator("td", has_text=re.compile(rf"^\s*{re.escape(reason)}\s*$"))
    row = page.locator("#change-history tbody tr", has=cell)
    assert row.count() == 1
    return sorted(item.split(":", 1)[0].strip() for item in row.locator("li").all_inner_texts())


def _history_changes(evaluation: Evaluation) -> list[list[str]]:
    rows = list(evaluation.history.order_by("history_id"))
    return [sorted(change.field for change in new.diff_against(old).changes) for old, new in itertools.pairwise(rows)]


def test_it_keeps_a_multi_line_quote_and_the_review_when_a_curator_changes_only_the_title(page, curator):
    evaluation = _source_checked_evaluation()
    rows_before = evaluation.history.count()
    admin_login(page, curator.username)

    _save_and_continue(page, evaluation, "title", "Runtime of the fine-tuned model")

    saved = Evaluation.objects.get(pk=evaluation.pk)
    assert saved.quote.encode() == QUOTE.encode()
    assert saved.title == "Runtime of the fine-tuned model"
    assert saved.review_state == ReviewState.SOURCE_CHECKED
    assert [e.transition for e in ReviewEvent.objects.filter(record_stable_id=saved.stable_id)] == ["check_source"]
    assert saved.history.count() == rows_before + 1
    assert saved.history.first().history_change_reason == "edited: title"
    assert _history_changes(saved)[-1] == ["title"]
    assert _changes_on_the_history_page(page, saved, "edited: title") == ["Title"]


def test_it_reopens_for_the_changed_locator_alone_and_keeps_the_quote_bytes(page, curator):
    evaluation = _source_checked_evaluation()
    admin_login(page, curator.username)

    _save_and_continue(page, evaluation, "source_locator", "Table 2, second column")

    saved = Evaluation.objects.get(pk=evaluation.pk)
    assert saved.quote.encode() == QUOTE.encode()
    assert saved.review_state == ReviewState.PROPOSED  # a locator is sourced: the review must see it again
    reopen = ReviewEvent.objects.filter(record_stable_id=saved.stable_id).order_by("pk").last()
    assert (reopen.transition, reopen.reason) == ("reopen", "edited: source_locator")
    assert saved.history.filter(history_change_reason="edited: source_locator").count() == 1
    assert ["source_locator"] in _history_changes(saved)
    assert not any("quote" in changes for changes in _history_changes(saved))
    assert _changes_on_the_history_page(page, saved, "edited: source_locator") == ["Source locator"]


def test_a_save_that_changes_nothing_writes_no_history_and_keeps_the_review(page, curator):
    evaluation = _source_checked_evaluation()
    rows_before = evaluation.history.count()
    admin_login(page, curator.username)

    page.goto(f"/admin/records/evaluation/{evaluation.pk}/change/")
    page.locator("input[name=_continue]").first.click()
    page.wait_for_selector("text=was changed successfully")

    saved = Evaluation.objects.get(pk=evaluation.pk)
    assert saved.quote.encode() == QUOTE.encode()
    assert saved.review_state == ReviewState.SOURCE_CHECKED
    assert saved.history.count() == rows_before
