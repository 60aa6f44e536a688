"""Public pages. Each view validates its input and calls one read query."""

from __future__ import annotations

from django.db.models import Count, Q
from django.shortcuts import render
from django.views.decorators.http import require_GET

from records import models as m
from records import queries

SEARCH_MAX_LENGTH = 200


@require_GET
def home(request):
    query = request.GET.get("q", "").strip()[:SEARCH_MAX_LENGTH]
    protocols = m.Protocol.objects.annotate(evaluation_count=Count("evaluations")).order_by("title")
    if query:
        protocols = protocols.filter(Q(title__icontains=query) | Q(stable_id__icontains=query) | Q(summary__icontains=query))
    return render(request, "records/home.html", {"protocols": protocols, "query": query})


@require_GET
def protocol_detail(request, stable_id: str):
    include_excluded = request.GET.get("include") == queries.INCLUDE_EXCLUDED
    page = queries.protocol_page(stable_id=stable_id, include_excluded=include_excluded)
    return render(request, "records/protocol_detail.html", {"page": page, "protocol": page.protocol})


@require_GET
def evaluation_detail(request, stable_id: str):
    evaluation = queries.record_or_404(queries.evaluations_queryset(), stable_id)
    return render(request, "records/evaluation_detail.html", {"evaluation": evaluation, "protocol": evaluation.protocol})


@require_GET
def configuration_detail(request, stable_id: str):
    configuration = queries.record_or_404(m.Configuration.objects.select_related("source"), stable_id)
    evaluations = queries.evaluations_queryset().filter(configuration=configuration).order_by("protocol__title", "stable_id")
    return render(request, "records/configuration_detail.html", {"configuration": configuration, "evaluations": evaluations})


@require_GET
def dataset_detail(request, stable_id: str):
    dataset = queries.record_or_404(
        m.Dataset.objects.select_related("source", "suite").prefetch_related("tasks", "protocols"), stable_id
    )
    return render(request, "records/dataset_detail.html", {"dataset": dataset})


@require_GET
def source_detail(request, stable_id: str):
    source = queries.record_or_404(m.Source.objects.all(), stable_id)
    context = {
        "source": source,
        "protocols": m.Protocol.objects.filter(source=source).order_by("title"),
        "evaluations": m.Evaluation.objects.filter(Q(source=source) | Q(concern_source=source)).select_related("protocol").order_by("title"),
        "datasets": m.Dataset.objects.filter(source=source, suite__isnull=True).order_by("name"),
    }
    return render(request, "records/source_detail.html", context)


@require_GET
def decision_detail(request, stable_id: str):
    decision = queries.record_or_404(m.Decision.objects.prefetch_related("protocols"), stable_id)
    return render(request, "records/decision_detail.html", {"decision": decision})


@require_GET
def coverage(request):
    protocols = m.Protocol.objects.annotate(
        checked=Count("evaluations", filter=Q(evaluations__review_state="source_checked")),
        excluded=Count("evaluations", filter=Q(evaluations__review_state="excluded")),
        proposed=Count("evaluations", filter=Q(evaluations__review_state="proposed")),
    ).order_by("title")
    return render(request, "records/coverage.html", {"protocols": protocols})
