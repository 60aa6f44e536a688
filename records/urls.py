from django.urls import path

from records import views

app_name = "records"

urlpatterns = [
    path("", views.home, name="home"),
    path("coverage/", views.coverage, name="coverage"),
    path("protocols/<slug:stable_id>/", views.protocol_detail, name="protocol"),
    path("evaluations/<slug:stable_id>/", views.evaluation_detail, name="evaluation"),
    path("configurations/<slug:stable_id>/", views.configuration_detail, name="configuration"),
    path("datasets/<slug:stable_id>/", views.dataset_detail, name="dataset"),
    path("sources/<slug:stable_id>/", views.source_detail, name="source"),
    path("decisions/<slug:stable_id>/", views.decision_detail, name="decision"),
]
