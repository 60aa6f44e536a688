"""What the apps above the catalogue add to a record page, read from each app's selectors and
rendered with that app's own partial templates: the release a page is derived from and its
downloads, the releases that contain the record, a protocol's recipes, the job that measured an
evaluation, and the "Suggest a correction" form. Each returns template context."""

from __future__ import annotations

from django.core.cache import cache
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe

from benchmarks import selectors as benchmark_selectors
from common.versions import request_version
from corrections import selectors as correction_selectors
from corrections.forms import CorrectionForm, timing_stamp
from pages import page_cache
from records.models import CuratedModel, Evaluation, Protocol
from releases import selectors as release_selectors
from releases.models import FileKind, Release

# The seed page's four downloads, in its order: (label, file name, or None for the bag's archive).
DOWNLOADS = (
    ("Protocol coverage CSV (gzip)", "protocol_coverage.csv.gz"),
    ("Model evaluation matrix (gzip)", "model_evaluation_matrix.csv.gz"),
    ("Source table (gzip)", "source_table.csv.gz"),
    ("Release and checksums (gzip)", None),
)

GPU_WORKER_COMMAND = "celery -A portal worker -Q gpu -c 1 --prefetch-multiplier 1"

# Where a cached correction form takes the reader's CSRF token and the form's signed time stamp:
# NUL characters survive escaping and occur in no record text (forms and PostgreSQL refuse them).
CSRF_MARKER = "\x00csrf-token\x00"
STARTED_MARKER = "\x00started\x00"
# A record page's form offers the record's values when it has at most this many; one with more links
# to the form's own page, which offers them all (and each value's ✎ link chooses its own).
VALUES_ON_RECORD_PAGES = 20


def release_downloads(release: Release | None) -> list[dict[str, object]]:
    """The record pages' download links to a release held here, each with its size and sha256 (one query)."""
    if release is None or release.is_external:
        return []
    files = list(release.files.all())
    by_base = {f.name.rsplit("/", 1)[-1]: f for f in files}
    archive = next((f for f in files if f.kind == FileKind.ARCHIVE), None)
    links = []
    for label, name in DOWNLOADS:
        found = archive if name is None else by_base.get(name)
        if found is not None:
            links.append(
                {"label": label, "file": found, "url": reverse("releases:file", args=[release.release_id, found.name])}
            )
    return links


def release_part(*, downloads: bool = False) -> dict[str, object]:
    """The release a page is derived from (the newest published one): `release`, `release_url` (its
    page, "" when none or not held here) and, with `downloads`, `release_downloads`."""
    release = release_selectors.latest_published()
    url = (
        reverse("releases:detail", args=[release.release_id]) if release is not None and not release.is_external else ""
    )
    context: dict[str, object] = {"release": release, "release_url": url}
    if downloads:
        context["release_downloads"] = release_downloads(release)
    return context


def membership_part(record: CuratedModel) -> dict[str, object]:
    """`release_membership`: the line naming the published releases that contain the record (one query)."""
    containing = release_selectors.releases_containing(
        record_type=record._meta.model_name or "", stable_id=record.stable_id
    )
    return {"release_membership": render_to_string("releases/_containing.html", {"containing": containing})}


def recipes_part(protocol: Protocol) -> dict[str, object]:
    """A protocol page's `recipe_line` (its execution recipes, reviewed first) and `run_instructions`
    (how to run them, with and without the portal): one query for both."""
    recipes = benchmark_selectors.recipes_for(protocol)
    context = {"recipes": recipes, "gpu_worker_command": GPU_WORKER_COMMAND}
    return {
        "recipe_line": render_to_string("benchmarks/_protocol_recipes.html", {**context, "part": "line"}),
        "run_instructions": render_to_string("benchmarks/_protocol_recipes.html", {**context, "part": "instructions"}),
    }


def job_part(evaluation: Evaluation) -> dict[str, object]:
    """An evaluation page's `benchmark_job`: the line naming the job that measured it, if one did."""
    job = benchmark_selectors.job_for(evaluation)
    return {"benchmark_job": render_to_string("benchmarks/_evaluation_job.html", {"job": job})}


def correction_part(request: HttpRequest, record: correction_selectors.Target) -> dict[str, object]:
    """A record page's `correction_form`: its "Suggest a correction" form (one query for a protocol's
    results).

    The form is rendered once a catalogue version (its choices name the record's results) and
    cached with markers where the reader's CSRF token and the form's time stamp go: both are
    filled in on every request, so neither is ever cached or shared."""
    reference = f"{correction_selectors.target_type_of(record)}:{record.stable_id}"
    key = f"correction-form:{request_version(request)}:{reference}"
    html = cache.get(key)
    if html is None:
        values = correction_selectors.value_count(record)
        # More values than a record page lists: the form's own page offers them, none are read here.
        listed = VALUES_ON_RECORD_PAGES + 1 if values <= VALUES_ON_RECORD_PAGES else 0
        choices = correction_selectors.page_choices(record, values_up_to=listed)
        form = CorrectionForm(choices=choices, initial={"record": reference, "started": STARTED_MARKER})
        context = {
            "form": form,
            "record": record,
            "csrf_token": CSRF_MARKER,
            "values_elsewhere": values if values > VALUES_ON_RECORD_PAGES else 0,
            "reference": reference,
        }
        html = render_to_string("corrections/_correction_form.html", context)
        cache.set(key, html, page_cache.TIMEOUT)
    html = html.replace(CSRF_MARKER, get_token(request)).replace(STARTED_MARKER, timing_stamp())
    return {"correction_form": mark_safe(html)}
