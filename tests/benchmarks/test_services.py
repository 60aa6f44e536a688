"""The job services: row first, message after commit, idempotent claim, the measurement, the sweeper."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from benchmarks import execution, measurement
from benchmarks.execution import benchmark_job_claim, benchmark_job_fail, benchmark_job_progress, benchmark_job_succeed
from benchmarks.jobs import JOBS, JobConflict, JobForbidden, JobInvalid
from benchmarks.models import BenchmarkJob, JobEvent, JobStatus
from benchmarks.services import benchmark_job_cancel, benchmark_job_enqueue, benchmark_job_rerun, benchmark_jobs_sweep
from records.models import Configuration, Evaluation, MeasuredBy
from reviews.models import ReviewState
from tests.benchmarks.conftest import fake_report

pytestmark = pytest.mark.django_db


def statuses(job) -> list[tuple[str, str]]:
    return list(JobEvent.objects.filter(job=job).order_by("id").values_list("from_status", "to_status"))


def claimed(job, host="gpu-1") -> BenchmarkJob:
    job.refresh_from_db()
    result = benchmark_job_claim(job_id=job.pk, task_id=job.celery_task_id, worker_host=host)
    assert result is not None
    return result


def test_it_writes_the_row_first_and_sends_the_message_only_after_commit(
    tiny_recipe, operator, broker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator, overrides={"steps": 30})
    assert broker.sent == []  # nothing left before the commit
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.attempts == 0 and job.sends == 1
    assert job.parameters == {
        "preset": "tiny",
        "task": "promoter_tata",
        "steps": 30,
        "batch_size": 4,
        "learning_rate": 0.003,
        "precision": "auto",
        "eval_interval": 0,
        "seed": 0,
        "warmup_steps": 2,
        "device": "auto",
        "synthetic": "uniform",
    }
    assert job.recipe_review_state == ReviewState.PROPOSED
    assert statuses(job) == [("", "queued")]
    assert JobEvent.objects.get(job=job).actor == operator
    assert len(callbacks) == 1
    callbacks[0]()
    [message] = broker.sent
    assert message["args"] == [job.pk]
    assert message["task_id"] == job.celery_task_id  # the row names its message before it exists
    assert (message["soft_time_limit"], message["time_limit"]) == (600, 900)


def test_it_sends_nothing_when_the_transaction_rolls_back(
    tiny_recipe, operator, broker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
            raise RuntimeError("the caller's transaction fails")
    assert broker.sent == [] and BenchmarkJob.objects.count() == 0


def test_it_leaves_a_job_queued_when_the_broker_cannot_be_reached(
    tiny_recipe, operator, monkeypatch, django_capture_on_commit_callbacks
):
    from benchmarks.tasks import benchmark_job_run

    def unreachable(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(benchmark_job_run, "apply_async", unreachable)
    with django_capture_on_commit_callbacks(execute=True):
        job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED  # the sweeper sends it again later


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"steps": 0}, "steps"),
        ({"preset": "gpt-5"}, "preset"),
        ({"task": "no_such_task"}, "task"),
        ({"precision": "fp8"}, "precision"),
        ({"steps": 3, "warmup_steps": 3}, "warmup_steps"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"weights": "/tmp/x"}, "weights"),
    ],
)
def test_it_refuses_parameters_that_cannot_run_naming_the_field(tiny_recipe, operator, broker, overrides, field):
    with pytest.raises(JobInvalid) as refused:
        benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator, overrides=overrides)
    assert field in refused.value.errors
    assert BenchmarkJob.objects.count() == 0


@pytest.mark.parametrize("role", ["curator", "release_manager", "anonymous"])
def test_it_lets_only_benchmark_operators_queue(tiny_recipe, make_user, broker, role):
    with pytest.raises(JobForbidden):
        benchmark_job_enqueue(recipe=tiny_recipe, requested_by=make_user(role))
    assert BenchmarkJob.objects.count() == 0


def test_it_claims_a_job_once_whatever_the_number_of_deliveries(tiny_recipe, operator, broker):
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    first = benchmark_job_claim(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-1")
    second = benchmark_job_claim(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-2")
    assert first is not None and second is None
    job.refresh_from_db()
    assert (job.status, job.attempts, job.worker_host) == (JobStatus.RUNNING, 1, "gpu-1")
    assert job.progress_total == 40 and job.started_at and job.heartbeat_at
    assert statuses(job) == [("", "queued"), ("queued", "running")]


def test_it_ignores_a_message_the_row_does_not_name(tiny_recipe, operator, broker):
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    assert benchmark_job_claim(job_id=job.pk, task_id="a-message-from-elsewhere", worker_host="gpu-1") is None
    assert benchmark_job_claim(job_id=10**9, task_id=job.celery_task_id, worker_host="gpu-1") is None
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED


def test_it_writes_progress_only_for_the_attempt_that_holds_the_job(tiny_recipe, operator, broker):
    job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    assert benchmark_job_progress(job_id=job.pk, attempt=1, step=20, total=40)
    assert not benchmark_job_progress(job_id=job.pk, attempt=2, step=30, total=40)
    job.refresh_from_db()
    assert (job.progress_step, job.progress_total) == (20, 40)
    benchmark_job_cancel(job=job, actor=operator)
    assert not benchmark_job_progress(job_id=job.pk, attempt=1, step=30, total=40)  # the run stops


def test_it_records_a_success_as_a_proposed_evaluation_in_minutes(tiny_recipe, operator, broker):
    job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    report = fake_report(seconds=1234.5678905)
    done = benchmark_job_succeed(job_id=job.pk, attempt=1, report=report, log_tail="step 40 of 40")
    assert done is not None
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.finished_at and job.progress_step == job.progress_total
    assert job.report == report and job.figures["total_wall_time_s"] == 1234.5678905
    assert job.environment["device_name"] == "Test CPU" and job.environment["worker_host"] == "gpu-1"
    assert job.log_tail == "step 40 of 40"
    evaluation = job.evaluation
    assert evaluation.measured_by == MeasuredBy.PORTAL and evaluation.source is None
    assert evaluation.review_state == ReviewState.PROPOSED
    assert evaluation.protocol == tiny_recipe.protocol
    assert evaluation.dataset.stable_id == "nt-benchmark-revised-promoter-tata"
    assert evaluation.configuration.stable_id == "portal-ia3-tiny-fp32-cpu"
    assert "fp32" in evaluation.configuration.name and "CPU" in evaluation.configuration.name
    assert "total wall time" in evaluation.aggregation and "minutes" in evaluation.aggregation
    [result] = evaluation.results.all()
    assert result.unit == "minute" and result.num_runs == 1
    assert result.value == Decimal("20.576132")  # 1234.5678905 s / 60, rounded to 6 decimals
    # History written under the requester, as for any other record; the curator can check it (four eyes).
    assert evaluation.history.get().history_user == operator
    assert evaluation.last_edited_by == operator
    assert statuses(job)[-1] == ("running", "succeeded")


def test_it_reuses_the_configuration_of_the_same_preset_precision_and_device(tiny_recipe, operator, broker):
    for _ in range(2):
        job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
        benchmark_job_succeed(job_id=job.pk, attempt=1, report=fake_report(device="cuda", precision="bf16"))
    assert Configuration.objects.filter(stable_id="portal-ia3-tiny-bf16-cuda").count() == 1
    assert Evaluation.objects.filter(measured_by=MeasuredBy.PORTAL).count() == 2


def test_it_takes_the_configuration_another_job_created_meanwhile(tiny_recipe, operator, broker, monkeypatch):
    # Two jobs of one configuration finish at once: the other one creates the configuration after
    # this one looked it up and found nothing. This run still succeeds, with the other's configuration.
    job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    others = Configuration.objects.create(stable_id="portal-ia3-tiny-bf16-cuda", name="created by the other job")
    configurations = Configuration.objects
    lookups: list[dict] = []

    class FirstLookupTooEarly:
        def filter(self, **conditions):
            lookups.append(conditions)
            return configurations.none() if len(lookups) == 1 else configurations.filter(**conditions)

    monkeypatch.setattr(Configuration, "objects", FirstLookupTooEarly())
    done = benchmark_job_succeed(job_id=job.pk, attempt=1, report=fake_report(device="cuda", precision="bf16"))
    monkeypatch.undo()
    assert done is not None and len(lookups) == 2  # missed, insert refused, found
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.evaluation.configuration == others
    assert Configuration.objects.filter(stable_id="portal-ia3-tiny-bf16-cuda").count() == 1
    # Called again, the helper finds the row at once.
    assert measurement._configuration_for(preset="tiny", precision="bf16", device="cuda", actor=operator) == others


def test_it_records_a_run_whose_loss_is_not_a_number_replacing_it_with_null(tiny_recipe, operator, broker):
    job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    report = {
        **fake_report(seconds=120.0),
        "loss_start": float("nan"),
        "loss_end": float("inf"),
        "evaluations": [{"step": 40, "loss": float("-inf"), "accuracy": 0.5, "mcc": 0.0}],
        "losses": (0.7, float("nan")),
    }
    done = benchmark_job_succeed(job_id=job.pk, attempt=1, report=report)
    assert done is not None
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert job.figures["loss_start"] is None and job.figures["loss_end"] is None
    assert job.figures["total_wall_time_s"] == 120.0 and job.report["total_wall_time_s"] == 120.0
    assert job.report["evaluations"] == [{"step": 40, "loss": None, "accuracy": 0.5, "mcc": 0.0}]
    assert job.report["losses"] == [0.7, None]
    assert job.evaluation.results.get().value == Decimal("2.000000")


def test_it_discards_the_report_of_a_job_cancelled_while_it_finished(tiny_recipe, operator, broker):
    job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    benchmark_job_cancel(job=job, actor=operator, reason="wrong task")
    assert benchmark_job_succeed(job_id=job.pk, attempt=1, report=fake_report()) is None
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED and job.evaluation is None
    assert not Evaluation.objects.filter(measured_by=MeasuredBy.PORTAL).exists()


def test_it_stores_the_error_and_log_tail_of_a_failure(tiny_recipe, operator, broker):
    job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    benchmark_job_fail(
        job_id=job.pk, attempt=1, error="RuntimeError: CUDA out of memory\n\nTraceback ...", log_tail="line 1\nline 2"
    )
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.finished_at
    assert job.error.startswith("RuntimeError: CUDA out of memory") and job.log_tail == "line 1\nline 2"
    assert JobEvent.objects.filter(job=job).last().reason == "RuntimeError: CUDA out of memory"


def test_it_runs_the_task_body_and_fails_the_job_with_the_runners_error(tiny_recipe, operator, broker, monkeypatch):
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)

    def broken_runner(**kwargs):
        import logging

        logging.getLogger("benchmarks.ia3").warning("about to fail")
        raise ValueError("device 'cuda' requested but CUDA is not available")

    monkeypatch.setattr(execution, "run_measurement", broken_runner)
    outcome = execution.benchmark_job_execute(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-1")
    assert outcome == "failed"
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert job.error.startswith("ValueError: device 'cuda' requested but CUDA is not available")
    assert "about to fail" in job.log_tail
    assert execution.benchmark_job_execute(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-2") == "skipped"


def test_it_cancels_queued_and_running_jobs_and_revokes_their_messages(
    tiny_recipe, operator, broker, django_capture_on_commit_callbacks
):
    queued = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    running = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_job_cancel(job=queued, actor=operator, reason="not needed")
        benchmark_job_cancel(job=running, actor=operator)
    assert broker.revoked == [
        {"task_id": queued.celery_task_id, "terminate": False, "signal": "SIGTERM"},
        {"task_id": running.celery_task_id, "terminate": False, "signal": "SIGTERM"},  # it stops itself
    ]
    for job in (queued, running):
        job.refresh_from_db()
        assert job.status == JobStatus.CANCELLED and job.finished_at
    assert statuses(queued) == [("", "queued"), ("queued", "cancelled")]
    assert JobEvent.objects.filter(job=queued).last().reason == "not needed"
    with pytest.raises(JobConflict):
        benchmark_job_cancel(job=queued, actor=operator)
    assert benchmark_job_claim(job_id=queued.pk, task_id=queued.celery_task_id, worker_host="gpu") is None


def test_it_lets_only_operators_cancel(tiny_recipe, operator, make_user, broker):
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    with pytest.raises(JobForbidden):
        benchmark_job_cancel(job=job, actor=make_user("curator"))
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED


def test_it_reruns_a_finished_job_with_its_parameters(tiny_recipe, operator, make_user, broker):
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator, overrides={"steps": 25, "seed": 7})
    with pytest.raises(JobConflict):
        benchmark_job_rerun(job=job, actor=operator)  # still queued
    benchmark_job_cancel(job=job, actor=operator)
    other = make_user("benchmark_operator")
    again = benchmark_job_rerun(job=job, actor=other)
    assert again.pk != job.pk and again.rerun_of == job and again.parameters == job.parameters
    assert again.status == JobStatus.QUEUED and again.requested_by == other
    assert JobEvent.objects.get(job=again).reason == f"rerun of job {job.pk}"
    with pytest.raises(JobForbidden):
        benchmark_job_rerun(job=job, actor=make_user("curator"))


def test_it_sends_again_a_queued_job_no_worker_started_with_backoff(
    tiny_recipe, operator, broker, django_capture_on_commit_callbacks
):
    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    first_task = job.celery_task_id
    sent = job.sent_at
    assert benchmark_jobs_sweep(now=sent + timedelta(minutes=9)).resent == []
    with django_capture_on_commit_callbacks(execute=True):
        assert benchmark_jobs_sweep(now=sent + timedelta(minutes=11)).resent == [job.pk]
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.sends == 2 and job.celery_task_id == first_task
    assert broker.sent[-1]["task_id"] == first_task
    # The next re-send waits twice as long.
    assert benchmark_jobs_sweep(now=job.sent_at + timedelta(minutes=15)).resent == []
    with django_capture_on_commit_callbacks(execute=True):
        assert benchmark_jobs_sweep(now=job.sent_at + timedelta(minutes=21)).resent == [job.pk]
    assert statuses(job) == [("", "queued"), ("queued", "queued"), ("queued", "queued")]
    # The back-off stops doubling at four times the interval: a broker that keeps losing messages
    # (Redis without persistence, restarted) never leaves a job hours from its next copy.
    for _ in range(3):
        job.refresh_from_db()
        assert benchmark_jobs_sweep(now=job.sent_at + timedelta(minutes=39)).resent == []
        with django_capture_on_commit_callbacks(execute=True):
            assert benchmark_jobs_sweep(now=job.sent_at + timedelta(minutes=41)).resent == [job.pk]


def test_it_keeps_a_resent_queued_jobs_place_the_first_copy_to_arrive_runs_it(
    tiny_recipe, operator, broker, django_capture_on_commit_callbacks
):
    # Two jobs wait behind a long run; the sweeper re-sends both. The copies sent first still claim
    # them, in their order: re-sending does not push a job to the back of the queue.
    with django_capture_on_commit_callbacks(execute=True):
        older = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
        newer = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
        assert benchmark_jobs_sweep(now=timezone.now() + timedelta(minutes=11)).resent == [older.pk, newer.pk]
    assert [message["task_id"] for message in broker.sent] == [older.celery_task_id, newer.celery_task_id] * 2
    first_copies, second_copies = broker.sent[:2], broker.sent[2:]
    for message in first_copies:
        [job_id] = message["args"]
        assert benchmark_job_claim(job_id=job_id, task_id=message["task_id"], worker_host="gpu-1") is not None
    for message in second_copies:  # the duplicates do nothing
        [job_id] = message["args"]
        assert (
            execution.benchmark_job_execute(job_id=job_id, task_id=message["task_id"], worker_host="gpu-2") == "skipped"
        )
    for job in (older, newer):
        job.refresh_from_db()
        assert (job.status, job.attempts, job.worker_host, job.sends) == (JobStatus.RUNNING, 1, "gpu-1", 2)


def test_it_gives_a_job_taken_from_a_lost_worker_a_new_message_and_revokes_the_old_one(
    tiny_recipe, operator, broker, django_capture_on_commit_callbacks
):
    job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator), host="gpu-1")
    lost_task = job.celery_task_id
    with django_capture_on_commit_callbacks(execute=True):
        assert benchmark_jobs_sweep(now=timezone.now() + timedelta(minutes=6)).requeued == [job.pk]
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.celery_task_id != lost_task
    assert broker.revoked == [{"task_id": lost_task, "terminate": True, "signal": "SIGTERM"}]
    assert broker.sent[-1]["task_id"] == job.celery_task_id
    # The lost attempt's message (redelivered after its worker died) no longer claims the job; the new one does.
    assert benchmark_job_claim(job_id=job.pk, task_id=lost_task, worker_host="gpu-1") is None
    assert benchmark_job_claim(job_id=job.pk, task_id=job.celery_task_id, worker_host="gpu-2") is not None


def test_it_requeues_a_job_whose_worker_was_lost_then_fails_it_after_the_last_attempt(
    tiny_recipe, operator, broker, settings
):
    settings.BENCHMARK_MAX_ATTEMPTS = 2
    job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator), host="gpu-1")
    later = timezone.now() + timedelta(minutes=6)
    assert benchmark_jobs_sweep(now=timezone.now() + timedelta(minutes=4)).requeued == []  # heartbeat still fresh
    assert benchmark_jobs_sweep(now=later).requeued == [job.pk]
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.attempts == 1 and job.progress_step == 0
    job = claimed(job, host="gpu-2")
    assert job.attempts == 2
    report = benchmark_jobs_sweep(now=timezone.now() + timedelta(minutes=6))
    assert report.failed == [job.pk]
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "no attempts left" in job.error and "gpu-2" in job.error
    assert statuses(job) == [
        ("", "queued"),
        ("queued", "running"),
        ("running", "queued"),
        ("queued", "running"),
        ("running", "failed"),
    ]


def test_it_sweeps_a_running_job_of_an_unknown_preset_with_the_longest_time_limit(tiny_recipe, operator, broker):
    from benchmarks.presets import LONGEST_HARD_LIMIT

    retired = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    BenchmarkJob.objects.filter(pk=retired.pk).update(parameters={**retired.parameters, "preset": "a-retired-preset"})
    ordinary = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    past_tiny_limit = timezone.now() + timedelta(minutes=16)
    report = benchmark_jobs_sweep(now=past_tiny_limit, stale_after=timedelta(hours=1))
    assert report.failed == [ordinary.pk]  # the job after the one of an unknown preset is still swept
    retired.refresh_from_db()
    assert retired.status == JobStatus.RUNNING  # within the longest hard limit of any preset
    past_longest = retired.started_at + timedelta(seconds=LONGEST_HARD_LIMIT + 60)
    assert benchmark_jobs_sweep(now=past_longest, stale_after=timedelta(days=1)).failed == [retired.pk]
    retired.refresh_from_db()
    assert retired.status == JobStatus.FAILED and "preset a-retired-preset" in retired.error


def test_it_sweeps_the_other_jobs_when_one_raises(tiny_recipe, operator, broker, monkeypatch, caplog):
    broken_running = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    lost = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    broken_queued = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    waiting = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    locked = JOBS.locked

    def locked_or_broken(job_id):
        if job_id in (broken_running.pk, broken_queued.pk):
            raise RuntimeError(f"a row the sweeper cannot read: {job_id}")
        return locked(job_id)

    monkeypatch.setattr(JOBS, "locked", locked_or_broken)
    report = benchmark_jobs_sweep(now=timezone.now() + timedelta(minutes=11))
    assert report.as_dict() == {"resent": [waiting.pk], "requeued": [lost.pk], "failed": []}
    assert f"benchmark job {broken_running.pk} could not be swept" in caplog.text
    assert f"benchmark job {broken_queued.pk} could not be swept" in caplog.text
    for job, status in ((broken_running, JobStatus.RUNNING), (broken_queued, JobStatus.QUEUED)):
        job.refresh_from_db()
        assert job.status == status and job.sends == 1


def test_it_fails_a_job_past_its_hard_time_limit_without_another_attempt(tiny_recipe, operator, broker):
    job = claimed(benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator))
    benchmark_job_progress(job_id=job.pk, attempt=1, step=10, total=40)
    past_limit = job.started_at + timedelta(minutes=16)
    report = benchmark_jobs_sweep(now=past_limit, stale_after=timedelta(hours=1))
    assert report.failed == [job.pk]
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.error.startswith("hard time limit exceeded")


def test_it_refuses_a_recipe_whose_protocol_is_not_timed(tiny_recipe, operator, broker):
    from benchmarks.services import recipe_ensure
    from tests.factories import ProtocolFactory

    recipe, _ = recipe_ensure(
        stable_id="mcc-recipe",
        title="A recipe of an accuracy protocol",
        protocol=ProtocolFactory(metric_unit="MCC"),
        preset="tiny",
        task="promoter_tata",
        steps=40,
    )
    with pytest.raises(JobInvalid) as refused:
        benchmark_job_enqueue(recipe=recipe, requested_by=operator)
    assert "recipe" in refused.value.errors


def test_it_enforces_the_status_table_in_the_database_too(tiny_recipe, operator, broker):
    from django.db import IntegrityError

    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    with pytest.raises(IntegrityError), transaction.atomic():
        BenchmarkJob.objects.filter(pk=job.pk).update(status="paused")
    with pytest.raises(IntegrityError), transaction.atomic():
        BenchmarkJob.objects.filter(pk=job.pk).update(status=JobStatus.SUCCEEDED)  # finished without finished_at


def test_the_beat_task_sweeps_and_sends_through_the_gpu_task(
    tiny_recipe, operator, broker, django_capture_on_commit_callbacks
):
    from benchmarks.tasks import benchmark_jobs_sweep as sweep_task

    job = benchmark_job_enqueue(recipe=tiny_recipe, requested_by=operator)
    BenchmarkJob.objects.filter(pk=job.pk).update(sent_at=timezone.now() - timedelta(hours=1))  # no worker took it
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_task() == {"resent": [job.pk], "requeued": [], "failed": []}
    assert [message["task_id"] for message in broker.sent] == [job.celery_task_id]
    assert statuses(job) == [("", "queued"), ("queued", "queued")]
