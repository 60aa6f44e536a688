"""The portal as the publisher of its releases, and a published release as it is cited
(releases.bundle.citation turns it into text, BibTeX, DataCite metadata and a schema.org Dataset):
the release page, its DataCite document and the bundle's own copy say the same."""

from __future__ import annotations

from collections.abc import Sequence

from django.http import HttpRequest
from django.urls import reverse

from common.licences import data_licence
from common.links import absolute_url
from releases import conf
from releases.bundle.citation import Licence, Publisher, ReleaseCitation
from releases.models import FileKind, Release, ReleaseFile

DESCRIPTION = (
    "Curated benchmark evidence about genomic foundation models: protocols, evaluations and results, each "
    "value with its source, locator and verbatim quote, as reviewed by curators; a BagIt bag of CSV tables "
    "described as a Frictionless data package."
)
KEYWORDS = ("genomic foundation models", "benchmarks", "DNA language models", "model evaluation", "provenance")


def publisher(*, request: HttpRequest | None = None) -> Publisher:
    """The portal, at the request's address (else PORTAL_SITE_URL), under the data licence."""
    licence = data_licence()
    return Publisher(
        name=conf.site_name(),
        site_url=absolute_url("/", request=request).rstrip("/"),
        licence=Licence(licence.spdx_id, licence.name, licence.url),
        description=DESCRIPTION,
        keywords=KEYWORDS,
    )


def release_citation(
    *, release: Release, files: Sequence[ReleaseFile] = (), request: HttpRequest | None = None
) -> ReleaseCitation:
    """How `release` (published, with an id) is cited; `files` its file rows, for the archive's address."""
    release_id = str(release.release_id)
    archive = next((file for file in files if file.kind == FileKind.ARCHIVE), None)
    download_url = ""
    if archive is not None:
        path = reverse("releases:file", kwargs={"release_id": release_id, "name": archive.name})
        download_url = absolute_url(path, request=request)
    return publisher(request=request).release(
        release_id=release_id,
        release_date=release.release_date,
        download_url=download_url,
        download_bytes=archive.bytes if archive is not None else None,
    )
