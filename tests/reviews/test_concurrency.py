"""Two curators act on the same record at once: exactly one transition wins, one event is written."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from reviews.models import ReviewEvent, ReviewState
from reviews.services import TransitionConflict, review_transition_apply
from tests.factories import EvaluationFactory

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 50


def race(record, actors) -> list[str]:
    barrier = threading.Barrier(len(actors))
    outcomes: list[str] = []

    def act(actor):
        try:
            barrier.wait()
            review_transition_apply(
                record=record, transition="check_source", actor=actor, expected_state=ReviewState.PROPOSED
            )
            outcomes.append("won")
        except TransitionConflict:
            outcomes.append("conflict")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=act, args=(actor,)) for actor in actors]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return sorted(outcomes)


def test_it_lets_exactly_one_of_two_simultaneous_transitions_win(curator, other_curator):
    for _ in range(ROUNDS):
        evaluation = EvaluationFactory()
        assert race(evaluation, [curator, other_curator]) == ["conflict", "won"]
        evaluation.refresh_from_db()
        assert evaluation.review_state == ReviewState.SOURCE_CHECKED
        assert ReviewEvent.objects.filter(object_id=evaluation.pk, record_stable_id=evaluation.stable_id).count() == 1
        assert evaluation.history.count() == 2  # created, then checked once
    assert connection.vendor in {"postgresql", "sqlite"}
