"""common.lifecycle: the table refuses unlisted moves, a claim is won once, a heartbeat says when the
claim is lost, the sweeper moves stale rows with an event. BenchmarkJob is the concrete model."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from benchmarks.jobs import CANCELLED, FAILED, JOBS, QUEUED, RUNNING, SUCCEEDED, JobConflict
from benchmarks.models import BenchmarkJob, JobEvent, JobStatus
from common.errors import Conflict
from common.lifecycle import NEW, Lifecycle, TransitionRefused, TransitionTable
from tests.benchmarks.conftest import make_tiny_recipe

pytestmark = pytest.mark.django_db


@pytest.fixture
def requester(make_user):
    return make_user("benchmark_operator")


@pytest.fixture
def queued(timed_protocol, requester):
    """A function making queued jobs the lifecycle's way: the row and its first event in one transaction."""
    recipe = make_tiny_recipe(timed_protocol)

    def make(message: str = "message-1") -> BenchmarkJob:
        with transaction.atomic():
            job = BenchmarkJob(
                recipe=recipe,
                parameters={"preset": "tiny", "steps": 40},
                requested_by=requester,
                celery_task_id=message,
            )
            JOBS.change(row=job, to=QUEUED, actor=requester, reason="queued")
        return job

    return make


def claim(job: BenchmarkJob, *, host: str = "gpu-1", **options) -> bool:
    with transaction.atomic():
        return JOBS.claim(row=job, to=RUNNING, reason=f"claimed by {host}", worker_host=host, **options)


def moves(job: BenchmarkJob) -> list[tuple[str, str, int]]:
    return list(JobEvent.objects.filter(job=job).order_by("id").values_list("from_status", "to_status", "attempt"))


def test_it_refuses_a_move_the_table_does_not_list(queued):
    job = queued()
    assert JOBS.table.allows(QUEUED, RUNNING) and not JOBS.table.allows(QUEUED, SUCCEEDED)
    with pytest.raises(JobConflict) as refused, transaction.atomic():
        JOBS.change(row=job, to=SUCCEEDED, finished_at=timezone.now())
    assert refused.value.field == "status" and refused.value.status == 409
    assert "is queued: it cannot become succeeded" in refused.value.message
    job.refresh_from_db()
    assert job.status == QUEUED and moves(job) == [(NEW, QUEUED, 0)]  # nothing written


def test_it_refuses_with_its_own_error_when_the_app_names_none(queued):
    table = TransitionTable(states=(QUEUED, RUNNING), moves={(NEW, QUEUED): "queue"}, terminal=frozenset())
    plain = Lifecycle(model=BenchmarkJob, table=table, event_model=JobEvent, event_row_field="job", label="job")
    with pytest.raises(TransitionRefused) as refused, transaction.atomic():
        plain.change(row=queued(), to=RUNNING)
    assert isinstance(refused.value, Conflict) and refused.value.code == "conflict" and refused.value.field == "status"


@pytest.mark.parametrize(
    "moves_, terminal, working",
    [
        ({(SUCCEEDED, QUEUED): "revive"}, {SUCCEEDED}, set()),  # a terminal status is never left
        ({(NEW, "paused"): "pause"}, set(), set()),  # a status the table does not have
        ({(NEW, QUEUED): "queue"}, {RUNNING}, {RUNNING}),  # terminal and working at once
    ],
)
def test_it_refuses_a_table_that_contradicts_itself(moves_, terminal, working):
    with pytest.raises(ValueError):
        TransitionTable(
            states=tuple(JobStatus.values), moves=moves_, terminal=frozenset(terminal), working=frozenset(working)
        )


def test_the_job_table_lists_its_unfinished_states_in_order():
    assert JOBS.table.unfinished == (QUEUED, RUNNING)
    assert JOBS.table.move_name(RUNNING, QUEUED) == "requeue" and JOBS.table.move_name(CANCELLED, QUEUED) is None


def test_it_grants_a_claim_once_to_workers_that_read_the_same_row(queued):
    first_read = queued()
    second_read = BenchmarkJob.objects.get(pk=first_read.pk)  # another worker read the row too, still queued
    assert claim(first_read, host="gpu-1")
    assert not claim(second_read, host="gpu-2")  # the conditional UPDATE matched no row
    job = BenchmarkJob.objects.get(pk=first_read.pk)
    assert (job.status, job.attempts, job.worker_host) == (RUNNING, 1, "gpu-1")
    assert job.started_at == job.heartbeat_at == first_read.heartbeat_at
    assert (first_read.status, first_read.attempts) == (RUNNING, 1)  # the winner's copy is up to date
    assert moves(job) == [(NEW, QUEUED, 0), (QUEUED, RUNNING, 1)]
    assert JobEvent.objects.filter(job=job).last().reason == "claimed by gpu-1"


def test_it_refuses_a_claim_whose_condition_no_longer_holds(queued):
    job = queued("message-2")
    assert not claim(job, match={"celery_task_id": "message-1"})  # the row names another message now
    assert claim(job, match={"celery_task_id": "message-2"})
    with pytest.raises(JobConflict), transaction.atomic():
        JOBS.claim(row=job, to=RUNNING, reason="claimed again")  # running -> running is no listed move


def test_a_heartbeat_tells_the_worker_whether_it_still_holds_the_claim(queued):
    job = queued()
    assert not JOBS.heartbeat(pk=job.pk, claim=0)  # queued: nobody holds it
    assert claim(job)
    later = timezone.now() + timedelta(seconds=30)
    assert JOBS.heartbeat(pk=job.pk, claim=1, now=later, progress_step=10, progress_total=40)
    assert not JOBS.heartbeat(pk=job.pk, claim=2)  # a later attempt's claim is not this one's
    job.refresh_from_db()
    assert (job.heartbeat_at, job.progress_step) == (later, 10)
    with transaction.atomic():
        JOBS.change(row=JOBS.locked(job.pk), to=CANCELLED, reason="cancelled", finished_at=timezone.now())
    assert not JOBS.heartbeat(pk=job.pk, claim=1)  # the claim is lost: the worker stops
    job.refresh_from_db()
    assert job.heartbeat_at == later


def test_the_sweeper_moves_stale_rows_by_the_table_with_an_event(queued):
    stale, fresh, waiting = queued(), queued(), queued()
    assert claim(stale) and claim(fresh)
    now = timezone.now() + timedelta(minutes=10)
    JOBS.heartbeat(pk=fresh.pk, claim=1, now=now - timedelta(minutes=1))
    cutoff = now - timedelta(minutes=5)
    assert JOBS.is_stale(BenchmarkJob.objects.get(pk=stale.pk), now=now, stale_after=timedelta(minutes=5))
    assert not JOBS.is_stale(BenchmarkJob.objects.get(pk=fresh.pk), now=now, stale_after=timedelta(minutes=5))

    def fail(job: BenchmarkJob) -> str:
        JOBS.change(row=job, to=FAILED, reason="worker lost", finished_at=now, error="no heartbeat")
        return "failed"

    outcomes = JOBS.sweep(statuses=[RUNNING], where=JOBS.stale_before(cutoff), visit=fail)
    assert outcomes == {"failed": [stale.pk]}
    statuses = dict(BenchmarkJob.objects.values_list("pk", "status"))
    assert (statuses[stale.pk], statuses[fresh.pk], statuses[waiting.pk]) == (FAILED, RUNNING, QUEUED)
    event = JobEvent.objects.filter(job=stale).last()
    assert (event.from_status, event.to_status, event.attempt, event.reason) == (RUNNING, FAILED, 1, "worker lost")
    assert event.actor is None and event.actor_role == "portal"


def test_the_sweeper_rolls_back_a_row_that_raises_and_sweeps_the_others(queued, caplog):
    broken, lost = queued(), queued()

    def requeue_or_break(job: BenchmarkJob) -> str:
        JOBS.change(row=job, to=CANCELLED, reason="swept", finished_at=timezone.now())
        if job.pk == broken.pk:
            raise RuntimeError("the decision failed half way")
        return "cancelled"

    assert JOBS.sweep(statuses=[QUEUED], visit=requeue_or_break) == {"cancelled": [lost.pk]}
    assert f"benchmark job {broken.pk} could not be swept" in caplog.text
    broken.refresh_from_db()
    assert broken.status == QUEUED and moves(broken) == [(NEW, QUEUED, 0)]  # its change and event rolled back
