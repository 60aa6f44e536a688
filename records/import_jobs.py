"""The request side of import jobs: what the API's import view and the admin's import page call.

A large import runs as a job (records.jobs): `import_job_enqueue` stores the document with the
job, writes its first status event and sends the message after the commit; a worker imports it
(`records.tasks.import_job_run`). `import_job_visible` and `import_job_status` are what the status
endpoint and page read. Imports point one way: this module -> records.tasks -> records.jobs.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.urls import reverse
from django.utils import timezone

from common.errors import Forbidden, Invalid
from common.types import Actor, acting_user
from records.imports import SECTIONS
from records.imports.document import NESTED
from records.jobs import IMPORT_JOBS, QUEUED, SUCCEEDED, ImportJobConflict, document_parse
from records.models import ImportJob, Limitation
from records.tasks import import_job_send

#: Adding and changing every kind of record an import document can hold (limitations come with protocols).
_IMPORTED_MODELS: tuple[type[models.Model], ...] = (*(section.model for section in SECTIONS), Limitation)
IMPORT_PERMISSIONS = tuple(
    f"records.{action}_{model._meta.model_name}" for model in _IMPORTED_MODELS for action in ("add", "change")
)


def may_import(actor: Actor) -> bool:
    """Whether `actor` holds the curators' permissions to import (add and change every record kind)."""
    return bool(
        actor is not None and actor.is_authenticated and actor.is_active and actor.has_perms(IMPORT_PERMISSIONS)
    )


def inline_max_records() -> int:
    """Documents with more entries than this are imported as a job (PORTAL_IMPORT_INLINE_MAX_RECORDS)."""
    return int(getattr(settings, "IMPORT_INLINE_MAX_RECORDS", 500))


def import_document_size(document: Any) -> int:
    """How many entries the document holds: its sections' and those nested in them (an evaluation's
    results, a protocol's baseline roles, a suite's tasks); 0 for anything but a JSON object."""
    if not isinstance(document, dict):
        return 0
    size = 0
    for section in SECTIONS:
        entries = document.get(section.key)
        if not isinstance(entries, list):
            continue
        size += len(entries)
        for (parent, key), _child in NESTED.items():
            if parent == section.key:
                size += sum(len(e[key]) for e in entries if isinstance(e, dict) and isinstance(e.get(key), list))
    return size


def import_document_read(text: str) -> Any:
    """The document's JSON text, parsed as the API parses a request; Invalid (field `document`) when
    it is not a JSON object."""
    try:
        document = document_parse(text)
    except RecursionError:
        raise Invalid("document: JSON nested too deeply", field="document") from None
    except ValueError as exc:
        raise Invalid(f"document: not JSON ({exc})", field="document") from None
    if not isinstance(document, dict):
        raise Invalid("document: an import document is a JSON object", field="document")
    return document


def import_job_enqueue(
    *,
    document_text: str,
    actor: Actor,
    dry_run: bool,
    overwrite: Sequence[str] = (),
    dry_run_job: ImportJob | None = None,
) -> ImportJob:
    """Queue an import of `document_text` (the JSON as sent, so numbers keep their digits) as a job.

    Atomic and audited: the job and its first `ImportJobEvent` are written together, and its
    message is sent once they are committed. Refuses (Forbidden) an actor without the curators'
    import permissions and (Invalid, field `document`) text that is not a JSON object; the document
    itself is validated by the worker, whose errors the job then holds.
    """
    if not may_import(actor):
        raise Forbidden(
            "importing needs the curators' permissions to add and change catalogue records", field="permission"
        )
    document = import_document_read(document_text)
    overwrite = [str(name) for name in overwrite]
    with transaction.atomic():
        now = timezone.now()
        job = ImportJob(
            document=document_text,
            title=str(document.get("title") or "")[:500],
            record_count=import_document_size(document),
            dry_run=dry_run,
            overwrite=overwrite,
            dry_run_job=dry_run_job,
            requested_by=acting_user(actor),
            max_attempts=int(getattr(settings, "IMPORT_JOB_MAX_ATTEMPTS", 3)),
            queued_at=now,
            celery_task_id=str(uuid.uuid4()),
            sends=1,
            sent_at=now,
            progress_total=import_document_size(document),
        )
        what = "dry run" if dry_run else "import"
        reason = f"{what} of {job.record_count} records queued" + (
            f" after dry run #{dry_run_job.pk}" if dry_run_job is not None else ""
        )
        IMPORT_JOBS.change(row=job, to=QUEUED, actor=actor, reason=reason)
        import_job_send(job=job)
    return job


def import_job_confirm(*, dry_run_job: ImportJob, actor: Actor, overwrite: Sequence[str] = ()) -> ImportJob:
    """Queue the real import of a finished dry run's stored document (no upload again)."""
    if not import_job_may_read(job=dry_run_job, actor=actor):
        raise Forbidden("this dry run is another curator's", field="permission")
    if not dry_run_job.dry_run or dry_run_job.status != SUCCEEDED:
        raise ImportJobConflict(
            f"import job {dry_run_job.pk} is not a finished dry run: only the document of one is imported for real"
        )
    return import_job_enqueue(
        document_text=dry_run_job.document,
        actor=actor,
        dry_run=False,
        overwrite=overwrite,
        dry_run_job=dry_run_job,
    )


def import_job_may_read(*, job: ImportJob, actor: Actor) -> bool:
    """A job is its owner's to read, and every curator's who may import."""
    if actor is None or not actor.is_authenticated:
        return False
    return job.requested_by_id == actor.pk or may_import(actor)


def import_job_visible(*, job_id: int, actor: Actor) -> ImportJob | None:
    """The job, when `actor` may read it; None when there is no such job or it is not theirs to read."""
    job = ImportJob.objects.select_related("requested_by").filter(pk=job_id).first()
    if job is None or not import_job_may_read(job=job, actor=actor):
        return None
    return job


def import_job_url(job: ImportJob) -> str:
    return reverse("api-import-job", args=[job.pk])


def import_job_status(job: ImportJob) -> dict[str, Any]:
    """The job as the status endpoint answers it: status, progress, and the report or the errors."""
    return {
        "id": job.pk,
        "url": import_job_url(job),
        "status": job.status,
        "dry_run": job.dry_run,
        "overwrite": list(job.overwrite or []),
        "title": job.title,
        "records": job.record_count,
        "progress": {"done": job.progress_done, "total": job.progress_total},
        "attempts": job.attempts,
        "requested_by": job.requested_by.get_username(),
        "queued_at": job.queued_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "report": job.report,
        "outcome": job.outcome,
        "detail": job.detail,
        "errors": list(job.errors or []),
        "dry_run_job": job.dry_run_job_id,
    }
