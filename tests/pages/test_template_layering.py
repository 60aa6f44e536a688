"""Templates keep to the apps' layers (pyproject.toml's first import-linter contract): a template of
an app (templates/<app>/, templates/admin/<app>/) loads tag libraries, includes partials and names
pages only of its own app or of the layers below it, as its Python may import only those. The public
pages are the pages app's (templates/pages/), under the `pages` URL namespace, at the paths they
always had."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.template import engines

TEMPLATES = Path(settings.BASE_DIR) / "templates"

_LOAD = re.compile(r"{%\s*load\s+(.+?)\s*%}")
_INCLUDE = re.compile(r"{%\s*include\s+(\S+)")
_URL = re.compile(r"{%\s*url\s+(\S+)")


def _layers() -> list[set[str]]:
    """The apps' layers, highest first, as the layer contract lists them."""
    config = tomllib.loads((Path(settings.BASE_DIR) / "pyproject.toml").read_text())
    contract = config["tool"]["importlinter"]["contracts"][0]
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


LAYERS = _layers()


def _project_apps() -> set[str]:
    """The portal's own apps (top-level packages of this repository; not what a virtual environment inside it holds)."""
    base = Path(settings.BASE_DIR).resolve()
    return {
        config.name.split(".")[0] for config in apps.get_app_configs() if Path(config.path).resolve().parent == base
    }


def _rank(app: str) -> int:
    return next(index for index, layer in enumerate(LAYERS) if app in layer)


def _may_reach(app: str, other: str) -> bool:
    """An app reaches itself and the layers below its own; not an app beside it in its layer."""
    return other == app or _rank(other) > _rank(app)


def _app_of_library(name: str) -> str | None:
    module = engines["django"].engine.libraries.get(name)
    return None if module is None else module.split(".")[0]


def _app_of_template(name: str) -> str | None:
    parts = name.split("/")
    if parts[0] == "admin" and len(parts) > 2:
        parts = parts[1:]
    return parts[0] if len(parts) > 1 and parts[0] in _project_apps() else None


def template_problems(text: str, *, app: str) -> list[str]:
    """What in a template of `app` reaches an app above it or beside it."""
    problems = []
    ours = _project_apps()
    for match in _LOAD.finditer(text):
        words = match.group(1).split()
        libraries = words[-1:] if "from" in words else words  # "{% load name from library %}"
        for library in libraries:
            owner = _app_of_library(library)
            if owner is None:
                problems.append(f"loads an unknown tag library {library!r}")
            elif owner in ours and not _may_reach(app, owner):
                problems.append(f"loads {library!r}, a tag library of {owner}")
    for match in _INCLUDE.finditer(text):
        name = match.group(1)
        if name[:1] not in "'\"":
            problems.append(f"includes a template named by a variable ({name}): its app cannot be checked")
            continue
        owner = _app_of_template(name.strip("'\""))
        if owner is not None and not _may_reach(app, owner):
            problems.append(f"includes {name}, a partial of {owner}")
    for match in _URL.finditer(text):
        name = match.group(1).strip("'\"")
        namespace = name.split(":")[0] if ":" in name else ""
        if namespace in ours and not _may_reach(app, namespace):
            problems.append(f"names the page {name!r} of {namespace} (take its URL from that app's page part)")
    return problems


def test_no_template_loads_includes_or_links_an_app_above_its_own():
    checked, problems = 0, {}
    for path in sorted(TEMPLATES.rglob("*")):
        name = str(path.relative_to(TEMPLATES))
        app = _app_of_template(name) if path.is_file() else None
        if app is None:
            continue
        checked += 1
        problems[name] = template_problems(path.read_text(), app=app)
    assert checked > 40
    assert {name: found for name, found in problems.items() if found} == {}


def test_the_check_fails_on_a_template_that_reaches_up_or_aside():
    page = "{% load record_tags humanize benchmark_tags %}{% include 'records/_list_pager.html' %}{% url 'corrections:correction-new' %}"
    assert template_problems(page, app="pages") == []
    assert template_problems("{% load record_tags %}", app="records") == ["loads 'record_tags', a tag library of pages"]
    assert template_problems("{% load gpu_worker_command from benchmark_tags %}", app="records") == [
        "loads 'benchmark_tags', a tag library of benchmarks"
    ]
    assert template_problems("{% load release_tags %}", app="pages") == ["loads an unknown tag library 'release_tags'"]
    assert template_problems(
        '{% include "releases/_containing.html" with record_type="source" %}', app="corrections"
    ) == ['includes "releases/_containing.html", a partial of releases']
    assert template_problems("{% include 'pages/_review.html' %}", app="records") == [
        "includes 'pages/_review.html', a partial of pages"
    ]
    assert template_problems("{% include partial %}", app="pages") == [
        "includes a template named by a variable (partial): its app cannot be checked"
    ]
    assert template_problems("{% url 'pages:home' %}", app="releases") == [
        "names the page 'pages:home' of pages (take its URL from that app's page part)"
    ]


# Every public page under the `pages` URL namespace: its path, and the module whose view serves it.
PUBLIC_PAGES = {
    "home": ("", "pages.views"),
    "search": ("search/", "pages.views"),
    "coverage": ("coverage/", "pages.views"),
    "coverage-csv": ("coverage.csv", "pages.views"),
    "protocol": ("protocols/<slug:stable_id>/", "pages.record_pages"),
    "protocol-chart": (
        r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/comparison\.(?P<extension>svg|png)$",
        "pages.downloads",
    ),
    "protocol-rows": (r"^protocols/(?P<stable_id>[-a-zA-Z0-9_]+)/results\.(?P<extension>csv|json)$", "pages.downloads"),
    "evaluation": ("evaluations/<slug:stable_id>/", "pages.record_pages"),
    "configuration": ("configurations/<slug:stable_id>/", "pages.record_pages"),
    "dataset": ("datasets/<slug:stable_id>/", "pages.record_pages"),
    "model": ("models/<slug:stable_id>/", "pages.record_pages"),
    "work": ("works/<slug:stable_id>/", "pages.record_pages"),
    "source": ("sources/<slug:stable_id>/", "pages.record_pages"),
    "decision": ("decisions/<slug:stable_id>/", "pages.record_pages"),
}


def test_the_public_pages_keep_their_paths_under_the_pages_namespace():
    from django.urls import get_resolver

    mounted = get_resolver("portal.urls").namespace_dict["pages"][1]
    served = {p.name: (str(p.pattern), p.callback.__module__) for p in mounted.url_patterns}
    assert served == PUBLIC_PAGES
