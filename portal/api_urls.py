"""The REST API under /api/v1/: one router for every app's endpoints, the schema and its docs."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import APIRootView, DefaultRouter

from common.api import KnownParametersMixin, licence_linked
from corrections.api import CorrectionCreateView
from records import api as records_api
from records import api_identity as records_api_identity
from records.api_imports import ImportJobView
from records.api_tables import TableDraftView
from reviews.api import ReviewEventViewSet


class PortalSchemaView(SpectacularAPIView):
    """The OpenAPI schema, naming the data's licence in a `Link` header as every API answer does."""

    def finalize_response(self, request, response, *args, **kwargs):
        return licence_linked(super().finalize_response(request, response, *args, **kwargs))


class PortalAPIRootView(KnownParametersMixin, APIRootView):
    """The index of /api/v1/: strict about its query parameters, as every endpoint under it."""


router = DefaultRouter()
router.APIRootView = PortalAPIRootView
router.register("protocols", records_api.ProtocolViewSet, basename="protocol")
router.register("datasets", records_api.DatasetViewSet, basename="dataset")
router.register("configurations", records_api.ConfigurationViewSet, basename="configuration")
router.register("evaluations", records_api.EvaluationViewSet, basename="evaluation")
router.register("results", records_api.ResultViewSet, basename="result")
router.register("sources", records_api.SourceViewSet, basename="source")
router.register("evidence-rows", records_api.EvidenceRowViewSet, basename="evidence-row")
router.register("baseline-roles", records_api.BaselineRoleViewSet, basename="baseline-role")
router.register("decisions", records_api.DecisionViewSet, basename="decision")
router.register("models", records_api_identity.GenomicModelViewSet, basename="model")
router.register("works", records_api_identity.WorkViewSet, basename="work")
router.register("task-equivalences", records_api_identity.TaskEquivalenceViewSet, basename="task-equivalence")
router.register("agreements", records_api_identity.AgreementViewSet, basename="agreement")
router.register("review-events", ReviewEventViewSet, basename="review-event")

urlpatterns = [
    path("schema/", PortalSchemaView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("corrections/", CorrectionCreateView.as_view(), name="api-corrections"),
    path("imports/", records_api.ImportView.as_view(), name="api-imports"),
    path("imports/<int:pk>/", ImportJobView.as_view(), name="api-import-job"),
    path("table-drafts/", TableDraftView.as_view(), name="api-table-drafts"),
    path("", include("releases.api_urls")),
    path("", include("benchmarks.api_urls")),
    path("", include(router.urls)),
]
