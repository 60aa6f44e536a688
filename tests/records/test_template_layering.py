"""Record pages are views of the pages app, which reads what other apps show on them (pages.parts)
and hands it to the templates as context: no template of records loads another app's tag library,
includes another app's partial or names another app's pages. The record pages keep their URL names
(`records:...`) and paths."""

from __future__ import annotations

import re
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.template import engines

RECORDS_TEMPLATES = Path(settings.BASE_DIR) / "templates" / "records"

_LOAD = re.compile(r"{%\s*load\s+(.+?)\s*%}")
_INCLUDE = re.compile(r"{%\s*include\s+(\S+)")
_URL = re.compile(r"{%\s*url\s+(\S+)")


def _project_apps() -> set[str]:
    """The portal's own apps (top-level packages of this repository; not what a virtual environment inside it holds)."""
    base = Path(settings.BASE_DIR).resolve()
    return {
        config.name.split(".")[0] for config in apps.get_app_configs() if Path(config.path).resolve().parent == base
    }


def _app_of_library(name: str) -> str | None:
    module = engines["django"].engine.libraries.get(name)
    return None if module is None else module.split(".")[0]


def template_problems(text: str, *, app: str = "records") -> list[str]:
    """What in a template of `app` reaches into another of the portal's apps."""
    problems = []
    others = _project_apps() - {app, "common"}  # common is every app's base (its filters: structured_data)
    for match in _LOAD.finditer(text):
        words = match.group(1).split()
        libraries = words[-1:] if "from" in words else words  # "{% load name from library %}"
        for library in libraries:
            owner = _app_of_library(library)
            if owner is None:
                problems.append(f"loads an unknown tag library {library!r}")
            elif owner in others:
                problems.append(f"loads {library!r}, a tag library of {owner}")
    for match in _INCLUDE.finditer(text):
        name = match.group(1)
        if name[:1] not in "'\"":
            problems.append(f"includes a template named by a variable ({name}): its app cannot be checked")
        elif not name.strip("'\"").startswith(f"{app}/"):
            problems.append(f"includes {name}, a partial of another app")
    for match in _URL.finditer(text):
        name = match.group(1).strip("'\"")
        namespace = name.split(":")[0] if ":" in name else ""
        if namespace != app:
            problems.append(f"names the page {name!r} of another app (take its URL from that app's page part)")
    return problems


def test_no_record_template_loads_includes_or_links_another_apps_templates():
    templates = sorted(path for path in RECORDS_TEMPLATES.rglob("*") if path.is_file())
    assert len(templates) > 10
    problems = {str(path.relative_to(RECORDS_TEMPLATES)): template_problems(path.read_text()) for path in templates}
    assert {name: found for name, found in problems.items() if found} == {}


def test_the_check_fails_on_a_template_that_reaches_up():
    assert (
        template_problems("{% load record_tags humanize %}{% include 'records/_review.html' %}{% url 'records:home' %}")
        == []
    )
    assert template_problems("{% load record_tags benchmark_tags %}") == [
        "loads 'benchmark_tags', a tag library of benchmarks"
    ]
    assert template_problems("{% load gpu_worker_command from benchmark_tags %}") == [
        "loads 'benchmark_tags', a tag library of benchmarks"
    ]
    assert template_problems("{% load release_tags %}") == ["loads an unknown tag library 'release_tags'"]
    assert template_problems('{% include "releases/_containing.html" with record_type="source" %}') == [
        'includes "releases/_containing.html", a partial of another app'
    ]
    assert template_problems("{% include partial %}") == [
        "includes a template named by a variable (partial): its app cannot be checked"
    ]
    assert template_problems("{% url 'releases:detail' release.release_id %}") == [
        "names the page 'releases:detail' of another app (take its URL from that app's page part)"
    ]


# Every public page under the `records` URL namespace: its path, and the app whose view serves it.
RECORD_PAGES = {
    "home": ("", "pages"),
    "search": ("search/", "pages"),
    "coverage": ("coverage/", "pages"),
    "coverage-csv": ("coverage.csv", "pages"),
    "protocol": ("protocols/<slug:stable_id>/", "pages"),
    "protocol-chart": (r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/comparison\.(?P<extension>svg|png)$", "records"),
    "protocol-rows": (r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/results\.(?P<extension>csv|json)$", "records"),
    "evaluation": ("evaluations/<slug:stable_id>/", "pages"),
    "configuration": ("configurations/<slug:stable_id>/", "pages"),
    "dataset": ("datasets/<slug:stable_id>/", "pages"),
    "model": ("models/<slug:stable_id>/", "pages"),
    "work": ("works/<slug:stable_id>/", "pages"),
    "source": ("sources/<slug:stable_id>/", "pages"),
    "decision": ("decisions/<slug:stable_id>/", "pages"),
}


def test_the_record_pages_keep_their_url_names_and_paths_and_pages_serves_them():
    from django.urls import get_resolver

    mounted = get_resolver("portal.urls").namespace_dict["records"][1]
    served = {p.name: (str(p.pattern), p.callback.__module__.split(".")[0]) for p in mounted.url_patterns}
    assert served == RECORD_PAGES
