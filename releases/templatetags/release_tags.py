"""Template tags through which record pages name their release without importing this app."""

from django import template
from django.urls import reverse

from releases.models import FileKind, Release, ReleaseStatus
from releases.selectors import latest_published

register = template.Library()


@register.simple_tag
def current_release() -> Release | None:
    """The newest published release: the one public pages are derived from."""
    return latest_published()


@register.simple_tag
def releases_containing(record_type: str, stable_id: str) -> list[Release]:
    return list(
        Release.objects.filter(status=ReleaseStatus.PUBLISHED, records__record_type=record_type, records__stable_id=stable_id)
        .order_by("-release_date", "-id")
        .distinct()
    )


# The seed page's four downloads, in its order: (label, file name, or None for the bag's archive).
DOWNLOADS = (
    ("Protocol coverage CSV (gzip)", "protocol_coverage.csv.gz"),
    ("Model evaluation matrix (gzip)", "model_evaluation_matrix.csv.gz"),
    ("Source table (gzip)", "source_table.csv.gz"),
    ("Release and checksums (gzip)", None),
)


@register.simple_tag
def release_downloads(release: Release | None) -> list[dict]:
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
            links.append({"label": label, "file": found, "url": reverse("releases:file", args=[release.release_id, found.name])})
    return links
