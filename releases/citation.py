"""A published release as it is cited (releases.bundle.citation turns it into text, BibTeX, DataCite
metadata and a schema.org Dataset): its id and date, the portal as publisher, its page and archive
at the portal's address, and the data licence."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse

from common.licences import data_licence
from common.links import absolute_url
from releases.bundle.citation import Licence, ReleaseCitation
from releases.models import FileKind, Release, ReleaseFile

KEYWORDS = ("genomic foundation models", "benchmarks", "DNA language models", "model evaluation", "provenance")


def release_citation(
    *, release: Release, files: Sequence[ReleaseFile] = (), request: HttpRequest | None = None
) -> ReleaseCitation:
    """How `release` (published, with an id) is cited; `files` its file rows, for the archive's address."""
    release_id = str(release.release_id)
    licence = data_licence()
    archive = next((file for file in files if file.kind == FileKind.ARCHIVE), None)
    records = sum((release.counts or {}).get("records", {}).values())
    held = "" if release.is_external else f" It holds {records:,} records"
    return ReleaseCitation(
        release_id=release_id,
        release_date=release.release_date,
        publisher=settings.PORTAL_SITE_NAME,
        url=absolute_url(reverse("releases:detail", kwargs={"release_id": release_id}), request=request),
        licence=Licence(licence.spdx_id, licence.name, licence.url),
        description=(
            "Curated benchmark evidence about genomic foundation models: protocols, evaluations and results, "
            f"each value with its source, locator and verbatim quote, as reviewed by curators.{held}"
            + (" in a BagIt bag of CSV tables described as a Frictionless data package." if held else "")
        ),
        keywords=KEYWORDS,
        download_url=(
            absolute_url(
                reverse("releases:file", kwargs={"release_id": release_id, "name": archive.name}), request=request
            )
            if archive is not None
            else ""
        ),
        download_bytes=archive.bytes if archive is not None else None,
    )
