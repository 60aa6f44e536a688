"""The releases API's routes, relative: the portal includes them under /api/v1/."""

from django.urls import path

from releases import api

app_name = "releases_api"

urlpatterns = [
    path("releases/", api.ReleaseListView.as_view(), name="list"),
    path("releases/latest/", api.ReleaseLatestView.as_view(), name="latest"),
    path("releases/<str:release_id>/", api.ReleaseDetailView.as_view(), name="detail"),
]
