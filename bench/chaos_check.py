"""The chaos run's invariants (bench/chaos.py runs this with the run's settings; the 2xx writes on stdin).

Prints one line per invariant and, last, a JSON line: the number of violations and the published
releases for `manage.py verify_release`.
"""

# ruff: noqa: E402  (the models are imported once Django is set up)
import json
import sys

import django

django.setup()

from collections import Counter

from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from benchmarks import conf as jobs_conf
from benchmarks.models import BenchmarkJob, JobEvent
from corrections.models import Correction
from records.models import BaselineRole, Configuration, Evaluation, EvidenceRow, Protocol
from releases import conf as releases_conf
from releases.models import Release, ReleaseBuild, ReleaseEvent
from reviews.models import ReviewEvent

writes, now, bad = json.load(sys.stdin), timezone.now(), []


def check(name, problems):
    print(
        f"  {'ok  ' if not problems else 'FAIL'} {name}"
        + ("" if not problems else f": {len(problems)}: {problems[:5]}")
    )
    bad.extend(problems)


stored = [t for t in writes["corrections"] if not Correction.objects.filter(token=t).exists()]
stored += [i for i in writes["configurations"] if not Configuration.objects.filter(stable_id=i).exists()]
stored += [e for e in writes["review_events"] if not ReviewEvent.objects.filter(pk=e).exists()]
stored += [j for j in writes["jobs"] if not BenchmarkJob.objects.filter(pk=j).exists()]
stored += [r for r in writes["releases"] if not Release.objects.filter(pk=r).exists()]
check(f"every 2xx write is stored ({sum(map(len, writes.values()))} writes)", stored)
states = []
for model in (Protocol, Evaluation, EvidenceRow, BaselineRole):
    kind = ContentType.objects.get_for_model(model)
    for record in model.objects.all():
        last = ReviewEvent.objects.filter(content_type=kind, object_id=record.pk).order_by("created_at", "id").last()
        if last is not None and last.to_state != record.review_state:
            states.append(f"{record.stable_id}: {record.review_state} != {last.to_state}")
check(f"every review state is its last event's target ({ReviewEvent.objects.count()} events)", states)
fresh_job, fresh_build = jobs_conf.stale_after(), releases_conf.stale_after()
unfinished, twice = [], []
for job in BenchmarkJob.objects.all():
    if job.status == "running" and not (job.heartbeat_at and now - job.heartbeat_at < fresh_job):
        unfinished.append(f"job {job.pk} running, heartbeat {job.heartbeat_at}")
    if job.status == "queued":
        unfinished.append(f"job {job.pk} still queued")
    events = list(JobEvent.objects.filter(job=job).order_by("created_at", "id"))
    claims = [e.attempt for e in events if e.to_status == "running"]
    if len(claims) != len(set(claims)) or sum(e.to_status == "succeeded" for e in events) > 1:
        twice.append(f"job {job.pk}: claims {claims}, {[e.to_status for e in events]}")
for build in ReleaseBuild.objects.exclude(status__in=["published", "failed"]):
    if not (build.status == "building" and build.heartbeat and now - build.heartbeat < fresh_build):
        unfinished.append(f"release #{build.pk} {build.status}, heartbeat {build.heartbeat}")
for release in Release.objects.all():
    published = ReleaseEvent.objects.filter(release=release, to_status="published").count()
    if published > 1:
        twice.append(f"release #{release.pk} published {published} times")
jobs = Counter(BenchmarkJob.objects.values_list("status", flat=True))
builds = Counter(ReleaseBuild.objects.values_list("status", flat=True))
check(f"every job and build is finished or progressing (jobs {dict(jobs)}, builds {dict(builds)})", unfinished)
check("no job or build ran twice", twice)
staging = [str(p) for p in releases_conf.releases_dir().glob(".build-*")]
check("no staging folder is left", staging)
print(
    json.dumps(
        {
            "violations": len(bad),
            "published": list(
                Release.objects.published()
                .exclude(release_id=None)
                .filter(files__isnull=False)
                .distinct()
                .values_list("release_id", flat=True)
            ),
        }
    )
)
