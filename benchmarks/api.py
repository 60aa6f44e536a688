"""REST API for benchmark jobs (mounted under /api/v1/ by the project's API router).

POST   benchmark-jobs/              queue a job from a recipe (benchmark operators)
GET    benchmark-jobs/              list jobs (users who may view jobs)
GET    benchmark-jobs/<id>/         one job
POST   benchmark-jobs/<id>/cancel/  cancel a queued or running job (benchmark operators)
POST   benchmark-jobs/<id>/rerun/   queue a new job with a finished job's parameters (benchmark operators)

Serializers validate the body's shape; the services decide (permissions, parameters, state), and
their refusals come back as 400, 403 or 409 with the field they concern.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView, ListAPIView, RetrieveAPIView
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response

from benchmarks.jobs import JobError
from benchmarks.models import BenchmarkJob, JobStatus, Recipe
from benchmarks.parameters import OVERRIDABLE
from benchmarks.presets import DEVICES, MAX_BATCH_SIZE, MAX_STEPS, PRECISIONS, PRESETS
from benchmarks.services import (
    QUEUE_PERMISSION,
    benchmark_job_cancel,
    benchmark_job_enqueue,
    benchmark_job_rerun,
)
from benchmarks.views import VIEW_PERMISSION, job_status
from common.api import (
    ConditionalGetMixin,
    KnownParametersMixin,
    StableCursorPagination,
    StrictCharField,
    record_filter,
)
from common.numbers import AsciiFloatField, AsciiIntegerField


class HasPermission(BasePermission):
    """Read methods need `view_benchmarkjob`; writes need `queue_job` (the services check it again,
    and cancel's own permission)."""

    def has_permission(self, request, view) -> bool:
        user = request.user
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return user.has_perm(VIEW_PERMISSION)
        return user.has_perm(view.write_permission)


class OverridesSerializer(serializers.Serializer):
    preset = serializers.ChoiceField(choices=list(PRESETS), required=False)
    task = StrictCharField(required=False, max_length=100)
    steps = AsciiIntegerField(required=False, min_value=1, max_value=MAX_STEPS)
    batch_size = AsciiIntegerField(required=False, min_value=1, max_value=MAX_BATCH_SIZE)
    learning_rate = AsciiFloatField(required=False, min_value=0)
    precision = serializers.ChoiceField(choices=list(PRECISIONS), required=False)
    eval_interval = AsciiIntegerField(required=False, min_value=0)
    seed = AsciiIntegerField(required=False)
    warmup_steps = AsciiIntegerField(required=False, min_value=0)
    device = serializers.ChoiceField(choices=list(DEVICES), required=False)

    def to_internal_value(self, data):
        unknown = sorted(set(data) - set(OVERRIDABLE)) if isinstance(data, dict) else []
        if unknown:
            raise serializers.ValidationError(
                {name: [f"not a parameter a job may override (use: {', '.join(OVERRIDABLE)})"] for name in unknown}
            )
        return super().to_internal_value(data)


class JobCreateSerializer(serializers.Serializer):
    recipe = serializers.SlugRelatedField(slug_field="stable_id", queryset=Recipe.objects.select_related("protocol"))
    overrides = OverridesSerializer(required=False)


class CancelSerializer(serializers.Serializer):
    reason = StrictCharField(required=False, allow_blank=True, max_length=2000)


def job_json(job: BenchmarkJob) -> dict:
    data = job_status(job, detailed=True)
    data["api_url"] = reverse("benchmarks-api:job-detail", args=[job.pk])
    return data


class ProgressSerializer(serializers.Serializer):
    step = serializers.IntegerField()
    total = serializers.IntegerField()
    fraction = serializers.FloatField(allow_null=True)


class EvaluationLinkSerializer(serializers.Serializer):
    stable_id = serializers.CharField()
    url = serializers.CharField()


class JobSerializer(serializers.Serializer):
    """A job as the API shows it (read-only; built by `job_json`)."""

    id = serializers.IntegerField()
    url = serializers.CharField(help_text="The job's public page.")
    api_url = serializers.CharField()
    recipe = serializers.CharField(help_text="The recipe's stable id.")
    protocol = serializers.CharField(help_text="The protocol's stable id.")
    status = serializers.ChoiceField(choices=JobStatus.choices)
    parameters = serializers.DictField(help_text="The runner's options (benchmarks.ia3.RunConfig).")
    attempts = serializers.IntegerField()
    max_attempts = serializers.IntegerField()
    progress = ProgressSerializer()
    queued_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    heartbeat_at = serializers.DateTimeField(allow_null=True)
    heartbeat_age_s = serializers.FloatField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    worker_host = serializers.CharField()
    environment = serializers.DictField()
    figures = serializers.DictField()
    error = serializers.CharField()
    evaluation = EvaluationLinkSerializer(
        allow_null=True, help_text="The proposed evaluation a succeeded job produced."
    )
    rerun_of = serializers.IntegerField(allow_null=True)
    report_url = serializers.CharField(allow_null=True)
    requested_by = serializers.CharField()
    celery_task_id = serializers.CharField()
    log_tail = serializers.CharField()

    def to_representation(self, job: BenchmarkJob) -> dict:
        return job_json(job)


def _refusal(error: JobError, *, overridden: set[str] = frozenset()) -> Response:
    """A service's refusal as the API answers it: the fields it concerns, the HTTP status it names."""
    body: dict = {}
    for field_name, message in error.errors.items():
        if field_name in overridden:
            body.setdefault("overrides", {})[field_name] = [message]
        else:
            body[field_name] = [message]
    return Response(body, status=error.status)


class JobPagination(StableCursorPagination):
    ordering = ("-queued_at", "-id")


def jobs_queryset():
    return BenchmarkJob.objects.select_related("recipe__protocol", "evaluation", "requested_by").order_by(
        "-queued_at", "-id"
    )


class JobFilter(filters.FilterSet):
    status = filters.ChoiceFilter(choices=JobStatus.choices)
    recipe = record_filter(Recipe, "recipe", field_name="recipe", help_text="Recipe stable id: its jobs.")

    class Meta:
        model = BenchmarkJob
        fields = ["status", "recipe"]


@extend_schema_view(
    get=extend_schema(summary="List benchmark jobs", description="The jobs, newest first (benchmark operators).")
)
class JobListCreate(KnownParametersMixin, ConditionalGetMixin, ListAPIView):
    permission_classes = [IsAuthenticated, HasPermission]
    write_permission = QUEUE_PERMISSION
    pagination_class = JobPagination
    serializer_class = JobSerializer
    filter_backends = [filters.DjangoFilterBackend]
    filterset_class = JobFilter

    def get_queryset(self):
        return jobs_queryset()

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(JobSerializer(page, many=True).data)

    @extend_schema(
        summary="Queue a benchmark job",
        description="Queue a job of a recipe, with optional overrides of its parameters (benchmark operators).",
        request=JobCreateSerializer,
        responses={201: JobSerializer},
    )
    def post(self, request, *args, **kwargs):
        serializer = JobCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        overrides = serializer.validated_data.get("overrides") or {}
        try:
            job = benchmark_job_enqueue(
                recipe=serializer.validated_data["recipe"], requested_by=request.user, overrides=overrides
            )
        except JobError as error:
            return _refusal(error, overridden=set(overrides))
        body = JobSerializer(jobs_queryset().get(pk=job.pk)).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["api_url"]})


@extend_schema_view(
    get=extend_schema(summary="Read one benchmark job", description="A job's status, progress, figures and log tail.")
)
class JobDetail(KnownParametersMixin, ConditionalGetMixin, RetrieveAPIView):
    permission_classes = [IsAuthenticated, HasPermission]
    write_permission = QUEUE_PERMISSION
    serializer_class = JobSerializer

    def get_queryset(self):
        return jobs_queryset()

    def retrieve(self, request, *args, **kwargs):
        return Response(JobSerializer(self.get_object()).data)


class JobCancel(KnownParametersMixin, GenericAPIView):
    permission_classes = [IsAuthenticated, HasPermission]
    write_permission = "benchmarks.cancel_job"
    serializer_class = CancelSerializer

    @extend_schema(
        summary="Cancel a benchmark job",
        description="Cancel a queued or running job, with an optional reason.",
        request=CancelSerializer,
        responses={200: JobSerializer},
    )
    def post(self, request, pk: int):
        job = get_object_or_404(BenchmarkJob, pk=pk)
        serializer = CancelSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            benchmark_job_cancel(job=job, actor=request.user, reason=serializer.validated_data.get("reason", ""))
        except JobError as error:
            return _refusal(error)
        return Response(JobSerializer(jobs_queryset().get(pk=pk)).data)


class JobRerun(KnownParametersMixin, GenericAPIView):
    permission_classes = [IsAuthenticated, HasPermission]
    write_permission = QUEUE_PERMISSION
    serializer_class = JobSerializer

    @extend_schema(
        summary="Rerun a benchmark job",
        description="Queue a new job with the same recipe and parameters as a finished one.",
        request=None,
        responses={201: JobSerializer},
    )
    def post(self, request, pk: int):
        job = get_object_or_404(BenchmarkJob.objects.select_related("recipe__protocol"), pk=pk)
        try:
            new_job = benchmark_job_rerun(job=job, actor=request.user)
        except JobError as error:
            return _refusal(error)
        body = JobSerializer(jobs_queryset().get(pk=new_job.pk)).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["api_url"]})
