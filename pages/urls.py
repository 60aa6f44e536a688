"""The public site's record pages, home, search and coverage, under the `pages` URL namespace
(`pages:protocol`, `pages:coverage`, ...), and a protocol's downloads (pages.downloads)."""

from django.urls import path, re_path

from pages import downloads, record_pages, views

app_name = "pages"

urlpatterns = [
    path("", views.home, name="home"),
    path("search/", views.search_page, name="search"),
    path("coverage/", views.coverage, name="coverage"),
    path("coverage.csv", views.coverage_csv, name="coverage-csv"),
    path("protocols/<slug:stable_id>/", record_pages.ProtocolPage.as_view(), name="protocol"),
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
    path("evaluations/<slug:stable_id>/", record_pages.EvaluationPage.as_view(), name="evaluation"),
    path("configurations/<slug:stable_id>/", record_pages.ConfigurationPage.as_view(), name="configuration"),
    path("datasets/<slug:stable_id>/", record_pages.DatasetPage.as_view(), name="dataset"),
    path("models/<slug:stable_id>/", record_pages.ModelPage.as_view(), name="model"),
    path("works/<slug:stable_id>/", record_pages.WorkPage.as_view(), name="work"),
    path("sources/<slug:stable_id>/", record_pages.SourcePage.as_view(), name="source"),
    path("decisions/<slug:stable_id>/", record_pages.DecisionPage.as_view(), name="decision"),
]
