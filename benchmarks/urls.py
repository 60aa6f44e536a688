from django.urls import path

from benchmarks import views

app_name = "benchmarks"

urlpatterns = [
    path("jobs/<int:job_id>/", views.job_detail, name="job"),
    path("jobs/<int:job_id>/status.json", views.job_status_json, name="job-status"),
    path("jobs/<int:job_id>/report.json", views.job_report_json, name="job-report"),
]
