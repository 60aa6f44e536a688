"""The REST API under /api/v1/."""

from django.urls import path

from reviews.api import CorrectionCreateView

urlpatterns = [
    path("corrections/", CorrectionCreateView.as_view(), name="api-corrections"),
]
