"""The import API's background side: a large document (or `?background=true`) is answered 202 with
the job's status URL, and `GET /api/v1/imports/<id>/` tells its status, progress and outcome.

`ImportView` (records.api) calls `background_answer` before it would import in the request; a
document of at most PORTAL_IMPORT_INLINE_MAX_RECORDS entries keeps the synchronous 200/201/400/409.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import (
    QUERY_BOOLEAN_SPELLINGS,
    QUERY_BOOLEAN_TYPE,
    KnownParametersMixin,
    query_boolean,
    query_boolean_description,
)
from common.errors import DomainError
from records.import_jobs import (
    import_document_size,
    import_job_enqueue,
    import_job_status,
    import_job_url,
    import_job_visible,
    inline_max_records,
)
from records.imports.validation import envelope_errors

BACKGROUND_PARAMETER = OpenApiParameter(
    "background",
    QUERY_BOOLEAN_TYPE,
    description=query_boolean_description(
        "True: always run the import as a background job (202 and a status URL); false, or absent: only a"
        " document of more than PORTAL_IMPORT_INLINE_MAX_RECORDS entries (500 by default) does."
    ),
)

ImportJobStatusSerializer = inline_serializer(
    "ImportJob",
    fields={
        "id": serializers.IntegerField(),
        "url": serializers.CharField(help_text="This status URL."),
        "status": serializers.ChoiceField(choices=["queued", "running", "succeeded", "failed"]),
        "dry_run": serializers.BooleanField(),
        "overwrite": serializers.ListField(child=serializers.CharField()),
        "title": serializers.CharField(),
        "records": serializers.IntegerField(help_text="Entries in the document's sections."),
        "progress": inline_serializer(
            "ImportJobProgress", fields={"done": serializers.IntegerField(), "total": serializers.IntegerField()}
        ),
        "attempts": serializers.IntegerField(),
        "requested_by": serializers.CharField(),
        "queued_at": serializers.DateTimeField(),
        "started_at": serializers.DateTimeField(allow_null=True),
        "finished_at": serializers.DateTimeField(allow_null=True),
        "report": serializers.DictField(
            allow_null=True, help_text="Once succeeded: the import's report, as the synchronous import answers it."
        ),
        "outcome": serializers.ChoiceField(
            choices=["", "invalid", "conflict", "error"],
            help_text="Once failed: `invalid` (the synchronous import's 400), `conflict` (its 409) or `error`.",
        ),
        "detail": serializers.CharField(help_text="Once failed: why, in one sentence."),
        "errors": serializers.ListField(
            child=inline_serializer(
                "ImportJobError", fields={"path": serializers.CharField(), "message": serializers.CharField()}
            ),
            help_text="Once failed: each problem with its path in the document.",
        ),
        "dry_run_job": serializers.IntegerField(allow_null=True, help_text="The dry run this import followed."),
    },
)


def refused_boolean(name: str, asked: str) -> Response | None:
    """A 400 naming `?<name>` (`dry_run`, `background`) for a value that spells no boolean
    (common.api.QUERY_BOOLEANS), in the import's error shape; None when it is one, or empty."""
    if asked == "" or query_boolean(asked) is not None:
        return None
    message = f"use {QUERY_BOOLEAN_SPELLINGS}"
    return Response(
        {"detail": f"{name}: {message}; nothing was written", "errors": [{"path": f"?{name}", "message": message}]},
        status=status.HTTP_400_BAD_REQUEST,
    )


def background_answer(*, request: Request, raw: bytes, dry_run: bool) -> Response | None:
    """The 202 of an import queued as a job, when the request asks for one or the document is large;
    None when the import runs in the request. `raw` is the body as sent (its numbers' digits kept)."""
    asked = query_boolean(request.query_params.get("background", "")) or False
    if not asked and import_document_size(request.data) <= inline_max_records():
        return None
    outside = (
        envelope_errors(request.data)
        if isinstance(request.data, dict)
        else [{"path": "document", "message": "must be a JSON object"}]
    )
    if outside:  # not an import document at all: refused now, not queued
        return Response(
            {"detail": "the document is invalid; nothing was queued", "errors": outside},
            status=status.HTTP_400_BAD_REQUEST,
        )
    try:
        job = import_job_enqueue(
            document_text=raw.decode("utf-8"),
            actor=request.user,
            dry_run=dry_run,
            overwrite=request.query_params.getlist("overwrite"),
        )
    except UnicodeDecodeError:
        return Response(
            {"detail": "document: not UTF-8", "errors": [{"path": "document", "message": "not UTF-8"}]},
            status=status.HTTP_400_BAD_REQUEST,
        )
    except DomainError as refused:
        return Response(
            {"detail": refused.message, "errors": [{"path": refused.field, "message": refused.message}]},
            status=refused.status,
        )
    return Response(import_job_status(job), status=status.HTTP_202_ACCEPTED, headers={"Location": import_job_url(job)})


class ImportJobView(KnownParametersMixin, APIView):
    """The status of an import job: queued, running (with progress), succeeded (with the report) or
    failed (with every error and its path). Readable by whoever queued it and by every curator who
    may import; anyone else is answered 404, as for a job that does not exist."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        operation_id="imports_job_retrieve",
        summary="Read an import job's status",
        responses={
            200: OpenApiResponse(ImportJobStatusSerializer, description="The job's status, progress and outcome."),
            404: OpenApiResponse(description="No such job, or not one this user may read."),
        },
    )
    def get(self, request: Request, pk: int) -> Response:
        job = import_job_visible(job_id=pk, actor=request.user)
        if job is None:
            return Response({"detail": f"no import job {pk} of yours"}, status=status.HTTP_404_NOT_FOUND)
        return Response(import_job_status(job))
