"""Queue a benchmark job from a shell: `manage.py run_benchmark --recipe ID --user USERNAME [--steps N] [--wait]`."""

from __future__ import annotations

import argparse
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.urls import NoReverseMatch, reverse

from benchmarks.jobs import JobError
from benchmarks.models import FINISHED, BenchmarkJob, JobStatus, Recipe
from benchmarks.parameters import OVERRIDABLE
from benchmarks.presets import DEVICES, PRECISIONS, PRESETS
from benchmarks.services import benchmark_job_enqueue


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    help = "Queue one benchmark job from a recipe (benchmark operators only); --wait follows it to the end."

    def add_arguments(self, parser):
        parser.add_argument("--recipe", required=True, help="the recipe's stable id")
        parser.add_argument("--user", required=True, help="the benchmark operator the job is queued for")
        parser.add_argument("--preset", choices=list(PRESETS))
        parser.add_argument("--task")
        parser.add_argument("--steps", type=_positive)
        parser.add_argument("--batch-size", type=_positive)
        parser.add_argument("--learning-rate", type=float)
        parser.add_argument("--precision", choices=list(PRECISIONS))
        parser.add_argument("--eval-interval", type=int)
        parser.add_argument("--seed", type=int)
        parser.add_argument("--warmup-steps", type=int)
        parser.add_argument("--device", choices=list(DEVICES))
        parser.add_argument(
            "--wait", action="store_true", help="print progress until the job finishes; exit 1 unless it succeeds"
        )
        parser.add_argument(
            "--timeout", type=float, default=None, help="with --wait: give up waiting after this many seconds"
        )
        parser.add_argument("--poll", type=float, default=2.0, help=argparse.SUPPRESS)

    def handle(self, *args, **options):
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: options["user"]}).first()
        if user is None:
            raise CommandError(f"no user {options['user']!r}")
        recipe = Recipe.objects.select_related("protocol").filter(stable_id=options["recipe"]).first()
        if recipe is None:
            raise CommandError(f"no recipe {options['recipe']!r}")
        overrides = {name: options[name] for name in OVERRIDABLE if options.get(name) is not None}
        try:
            job = benchmark_job_enqueue(recipe=recipe, requested_by=user, overrides=overrides)
        except JobError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"queued benchmark job {job.pk}: {self._url(job)}")
        if options["wait"]:
            self._wait(job, timeout=options["timeout"], poll=options["poll"])

    def _url(self, job: BenchmarkJob) -> str:
        try:
            return reverse("benchmarks:job", args=[job.pk])
        except NoReverseMatch:  # the job pages are not mounted in this project's urls
            return f"job {job.pk}"

    def _wait(self, job: BenchmarkJob, *, timeout: float | None, poll: float) -> None:
        started = time.monotonic()
        last = None
        while True:
            job.refresh_from_db()
            line = f"{job.status} {job.progress_step}/{job.progress_total or job.parameters['steps']} (attempt {job.attempts})"
            if line != last:
                self.stdout.write(line)
                last = line
            if job.status in FINISHED:
                break
            if timeout is not None and time.monotonic() - started > timeout:
                raise CommandError(
                    f"job {job.pk} still {job.status} after {timeout:g} s (it goes on; see {self._url(job)})"
                )
            time.sleep(poll)
        if job.status != JobStatus.SUCCEEDED:
            first_line = job.error.strip().splitlines()[0] if job.error.strip() else job.status
            raise CommandError(f"job {job.pk} {job.status}: {first_line}")
        self.stdout.write(
            f"job {job.pk} succeeded: {job.figures.get('total_wall_time_s', 0):.3f} s; "
            f"proposed evaluation {job.evaluation.stable_id if job.evaluation else '(removed)'}"
        )
