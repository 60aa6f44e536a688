"""The record pages, one class a kind: `RecordPage` holds what every record page does (the page
cache, the releases that contain the record, the parts made per request) and each page names its
model, its template and its `parts`: the record read for the page and the page's context.

A page is the same bytes for every reader while the catalogue is unchanged (pages.page_cache); the
correction form (on a record corrections take suggestions for) and a page's `live` parts are made
on every request, for the record `parts` loaded or, on a cached page, the one `find` loads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.http import HttpRequest, HttpResponse
from django.views import View

from pages import identity_pages, model_page, page_cache, parts, protocol_page, structured_data
from records import selectors
from records.models import (
    Configuration,
    CuratedModel,
    Dataset,
    Decision,
    Evaluation,
    GenomicModel,
    Protocol,
    Source,
    Work,
)


class RecordPage(View):
    """A record's public page at `<kind>/<stable_id>/`: GET and HEAD only."""

    http_method_names: ClassVar[list[str]] = ["get", "head"]
    model: ClassVar[type[CuratedModel]]
    template_name: ClassVar[str]
    #: Whether the page carries the correction form (corrections take suggestions for the kind).
    correctable: ClassVar[bool] = True

    def parts(self, request: HttpRequest, stable_id: str) -> tuple[Any, Mapping[str, object]]:
        """The record as the page shows it, and the page's context."""
        raise NotImplementedError

    def live(self, record: Any) -> Mapping[str, object]:
        """Parts made on every request beside the correction form (none unless a page says)."""
        return {}

    def find(self, stable_id: str) -> Any:
        return selectors.record_or_404(self.model.objects.all(), stable_id)

    def get(self, request: HttpRequest, stable_id: str) -> HttpResponse:
        loaded: list[Any] = []

        def context() -> dict[str, object]:
            record, values = self.parts(request, stable_id)
            loaded.append(record)
            return {**parts.membership_part(record), **values}

        def live() -> dict[str, object]:
            record = loaded[0] if loaded else self.find(stable_id)
            correction = parts.correction_part(request, record) if self.correctable else {}
            return {**self.live(record), **correction}

        return page_cache.cached_page(request, template=self.template_name, context=context, live=live)


def chart_query(request: HttpRequest) -> str:
    """The query string that selects the same charts for download ("" or "?include=...&dataset=...")."""
    query = request.GET.copy()
    for key in list(query):
        if key not in (protocol_page.INCLUDE_PARAM, protocol_page.DATASET_PARAM):
            del query[key]
    return f"?{query.urlencode()}" if query else ""


class ProtocolPage(RecordPage):
    model = Protocol
    template_name = "pages/protocol_detail.html"

    def parts(self, request: HttpRequest, stable_id: str) -> tuple[Protocol, Mapping[str, object]]:
        page = protocol_page.protocol_page(stable_id=stable_id, params=request.GET)
        return page.protocol, {
            **parts.release_part(downloads=True),
            **parts.recipes_part(page.protocol),
            "page": page,
            "protocol": page.protocol,
            "evidence": selectors.faceted(
                list(page.protocol.evidence_rows.all()), selectors.EVIDENCE_FACETS, request.GET
            ),
            "charts_sentence": page.charts_sentence,
            "chart_query": chart_query(request),
            "structured_data": structured_data.protocol_dataset(protocol=page.protocol, request=request),
        }


class EvaluationPage(RecordPage):
    model = Evaluation
    template_name = "pages/evaluation_detail.html"

    def parts(self, request: HttpRequest, stable_id: str) -> tuple[Evaluation, Mapping[str, object]]:
        evaluation = selectors.record_or_404(
            selectors.evaluations_queryset().prefetch_related("repeated_by"), stable_id
        )
        return evaluation, {**parts.release_part(), "evaluation": evaluation, "protocol": evaluation.protocol}

    def live(self, record: Any) -> Mapping[str, object]:
        return parts.job_part(record)  # a job's status is not a catalogue change


class ConfigurationPage(RecordPage):
    model = Configuration
    template_name = "pages/configuration_detail.html"

    def parts(self, request: HttpRequest, stable_id: str) -> tuple[Configuration, Mapping[str, object]]:
        page = identity_pages.configuration_page(stable_id=stable_id, params=request.GET)
        return page.configuration, {"configuration": page.configuration, "page": page}


class DatasetPage(RecordPage):
    """A dataset's page; for a task that protocols score, the task page: its ranked tables across
    protocols, their charts and timelines and whether independent measurements agree
    (pages.identity_pages), each long list a page at a time (`?table=<key>&page=<n>`)."""

    model = Dataset
    template_name = "pages/dataset_detail.html"

    def parts(self, request: HttpRequest, stable_id: str) -> tuple[Dataset, Mapping[str, object]]:
        page = identity_pages.task_page(stable_id=stable_id, params=request.GET)
        return page.dataset, {
            "dataset": page.dataset,
            "task": page,
            "structured_data": structured_data.task_dataset(dataset=page.dataset, request=request),
        }


class ModelPage(RecordPage):
    """A model's page: every task it was measured on, across papers and protocols, with who measured,
    its rank within each protocol's comparison and whether the measurements agree; `?task=&metric=`
    shows one task's every measurement (pages.model_page). No correction form: corrections take
    no suggestions for models (corrections.selectors.MODELS)."""

    model = GenomicModel
    template_name = "pages/model_detail.html"
    correctable = False

    def parts(self, request: HttpRequest, stable_id: str) -> tuple[GenomicModel, Mapping[str, object]]:
        page = model_page.model_page(stable_id=stable_id, params=request.GET)
        return page.model, {"model": page.model, "page": page}


class WorkPage(RecordPage):
    """A work's page: its versions (sources), the evaluations each reports and the models it
    introduced. No correction form: corrections take no suggestions for works."""

    model = Work
    template_name = "pages/work_detail.html"
    correctable = False

    def parts(self, request: HttpRequest, stable_id: str) -> tuple[Work, Mapping[str, object]]:
        page = identity_pages.work_page(stable_id=stable_id, params=request.GET)
        return page.work, {"work": page.work, "page": page}


class SourcePage(RecordPage):
    model = Source
    template_name = "pages/source_detail.html"

    def parts(self, request: HttpRequest, stable_id: str) -> tuple[Source, Mapping[str, object]]:
        page = identity_pages.source_page(stable_id=stable_id, params=request.GET)
        return page.source, {"source": page.source, "page": page}


class DecisionPage(RecordPage):
    model = Decision
    template_name = "pages/decision_detail.html"

    def parts(self, request: HttpRequest, stable_id: str) -> tuple[Decision, Mapping[str, object]]:
        decision = selectors.record_or_404(Decision.objects.prefetch_related("protocols"), stable_id)
        return decision, {"decision": decision}
