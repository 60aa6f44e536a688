"""The public site's record pages, home, search and coverage, under the `pages` URL namespace
(`pages:protocol`, `pages:coverage`, ...), and a protocol's downloads (pages.downloads)."""

from django.urls import path, re_path

from pages import downloads, views

app_name = "pages"

urlpatterns = [
    path("", views.home, name="home"),
    path("search/", views.search_page, name="search"),
    path("coverage/", views.coverage, name="coverage"),
    path("coverage.csv", views.coverage_csv, name="coverage-csv"),
    path("protocols/<slug:stable_id>/", views.protocol_detail, name="protocol"),
    re_path(
        r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/comparison\.(?P<extension>svg|png)$",
        downloads.protocol_chart,
        name="protocol-chart",
    ),
    re_path(
        r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/results\.(?P<extension>csv|json)$",
        downloads.protocol_rows,
        name="protocol-rows",
    ),
    path("evaluations/<slug:stable_id>/", views.evaluation_detail, name="evaluation"),
    path("configurations/<slug:stable_id>/", views.configuration_detail, name="configuration"),
    path("datasets/<slug:stable_id>/", views.dataset_detail, name="dataset"),
    path("models/<slug:stable_id>/", views.model_detail, name="model"),
    path("works/<slug:stable_id>/", views.work_detail, name="work"),
    path("sources/<slug:stable_id>/", views.source_detail, name="source"),
    path("decisions/<slug:stable_id>/", views.decision_detail, name="decision"),
]
