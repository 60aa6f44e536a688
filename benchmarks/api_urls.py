"""The benchmark jobs' API routes, relative: the project's API includes them under /api/v1/."""

from django.urls import path

from benchmarks import api

app_name = "benchmarks-api"

urlpatterns = [
    path("benchmark-jobs/", api.JobListCreate.as_view(), name="job-list"),
    path("benchmark-jobs/<int:pk>/", api.JobDetail.as_view(), name="job-detail"),
    path("benchmark-jobs/<int:pk>/cancel/", api.JobCancel.as_view(), name="job-cancel"),
    path("benchmark-jobs/<int:pk>/rerun/", api.JobRerun.as_view(), name="job-rerun"),
]
