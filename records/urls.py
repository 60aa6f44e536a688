"""The catalogue's public pages. portal/urls.py mounts `urlpatterns_for(parts=...)` with the parts the
apps above records add to its pages (records.views.PageParts); `urlpatterns` is the same pages without them."""

from django.urls import URLPattern, path, re_path

from records import views
from records.views import PageParts

app_name = "records"


def urlpatterns_for(*, parts: PageParts) -> list[URLPattern]:
    with_parts = {"parts": parts}
    return [
        path("", views.home, name="home"),
        path("search/", views.search_page, name="search"),
        path("coverage/", views.coverage, with_parts, name="coverage"),
        path("coverage.csv", views.coverage_csv, with_parts, name="coverage-csv"),
        path("protocols/<slug:stable_id>/", views.protocol_detail, with_parts, name="protocol"),
        re_path(
            r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/comparison\.(?P<extension>svg|png)$",
            views.protocol_chart,
            name="protocol-chart",
        ),
        re_path(
            r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/results\.(?P<extension>csv|json)$",
            views.protocol_rows,
            name="protocol-rows",
        ),
        path("evaluations/<slug:stable_id>/", views.evaluation_detail, with_parts, name="evaluation"),
        path("configurations/<slug:stable_id>/", views.configuration_detail, with_parts, name="configuration"),
        path("datasets/<slug:stable_id>/", views.dataset_detail, with_parts, name="dataset"),
        path("models/<slug:stable_id>/", views.model_detail, with_parts, name="model"),
        path("works/<slug:stable_id>/", views.work_detail, with_parts, name="work"),
        path("sources/<slug:stable_id>/", views.source_detail, with_parts, name="source"),
        path("decisions/<slug:stable_id>/", views.decision_detail, with_parts, name="decision"),
    ]


urlpatterns = urlpatterns_for(parts=views.NO_PARTS)
