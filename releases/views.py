"""Public release pages and downloads. Each view validates its input and calls one read query.

Downloads send ETag = the file's sha256, honour If-None-Match (304) and one byte range (206,
416 when unsatisfiable), and only serve names listed in the release's file table. Before any byte
goes out, the file is checked against its recorded sha256 (once per file identity, cached): a
damaged file answers 503 and is reported (`releases.services.release_file_serve_check`).
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterator

from django.http import (
    FileResponse,
    Http404,
    HttpResponse,
    HttpResponseNotModified,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_safe

from releases import selectors
from releases.bundle.citation import citation_bibtex, citation_datacite, citation_schema_org, citation_text
from releases.citation import release_citation
from releases.models import Release, ReleaseStatus
from releases.services import release_file_serve_check

REFRESH_SECONDS = 3
STREAM_BLOCK = 64 * 1024
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
CONTENT_TYPES = {
    ".csv.gz": "application/gzip",
    ".tar.gz": "application/gzip",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
}


@require_safe
def release_list(request):
    return render(request, "releases/release_list.html", selectors.release_list_page())


@require_safe
def release_latest(request):
    """The newest published release's page: a redirect that changes when a release is published
    (so never cached), to a page that does not."""
    release = selectors.latest_published_or_404()
    return _latest_redirect(reverse("releases:detail", kwargs={"release_id": release.release_id}))


@require_safe
def release_latest_file(request, name: str):
    """A file of the newest release whose files this portal holds, by its name in the bundle:
    `/releases/latest/files/data/<table>.csv.gz` stays the address of the newest data."""
    release = selectors.latest_built()
    if release is None:
        raise Http404("No release with files has been published yet")
    selectors.release_file_or_404(release_id=str(release.release_id), name=name)
    return _latest_redirect(reverse("releases:file", kwargs={"release_id": release.release_id, "name": name}))


def _latest_redirect(location: str) -> HttpResponse:
    response = redirect(location)
    response["Cache-Control"] = "no-cache"
    return response


@require_safe
def release_detail(request, release_id: str):
    page = selectors.release_page(release_id=release_id)
    citation = release_citation(release=page.release, files=page.files, request=request)
    context = {
        "page": page,
        "release": page.release,
        "citation_text": citation_text(citation),
        "citation_bibtex": citation_bibtex(citation),
        "dataset": citation_schema_org(citation),
    }
    return render(request, "releases/release_detail.html", context)


@require_safe
def release_datacite(request, release_id: str):
    """The release's DataCite metadata (kernel 4.5, as DataCite's REST API takes it; no DOI yet)."""
    release = selectors.published_by_id_or_404(release_id)
    citation = release_citation(release=release, files=list(release.files.all()), request=request)
    response = JsonResponse(citation_datacite(citation), json_dumps_params={"indent": 2, "sort_keys": True})
    response["Content-Disposition"] = f'inline; filename="{release.release_id}-datacite.json"'
    return response


@require_safe
def release_build_detail(request, pk: int):
    """A release before it has an id: its progress while it builds (the page refreshes itself)."""
    release = selectors.release_by_pk_or_404(pk)
    if release.status == ReleaseStatus.PUBLISHED:
        return redirect("releases:detail", release_id=release.release_id)
    response = render(request, "releases/release_build.html", {"release": release})
    if release.is_unfinished:
        response["Refresh"] = str(REFRESH_SECONDS)
    return response


@require_safe
def release_file(request, release_id: str, name: str):
    release, record, path = selectors.release_file_or_404(release_id=release_id, name=name)
    etag = f'"{record.sha256}"'
    size = record.bytes
    headers = {
        "ETag": etag,
        "Accept-Ranges": "bytes",
        "Cache-Control": "public, max-age=31536000, immutable",
        "X-Content-Type-Options": "nosniff",
    }
    if _etag_matches(request.headers.get("If-None-Match", ""), record.sha256):
        # The client holds the recorded bytes already; nothing of the disk is sent.
        response = HttpResponseNotModified()
        for key, value in headers.items():
            response[key] = value
        return response
    content_type = _content_type(name)
    filename = name.rsplit("/", 1)[-1]
    byte_range = _requested_range(request, record.sha256, size)
    if byte_range == "unsatisfiable":
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        for key, value in headers.items():
            response[key] = value
        return response
    # The bytes sent come from the handle that was checked: never bytes that differ from the sha256.
    handle = path.open("rb")
    try:
        if not release_file_serve_check(release=release, record=record, handle=handle):
            handle.close()
            return _damaged(request, release, record)
    except BaseException:
        handle.close()
        raise
    if byte_range is None:
        response = FileResponse(handle, as_attachment=True, filename=filename, content_type=content_type)
        response["Content-Length"] = str(size)
    else:
        start, end = byte_range
        response = StreamingHttpResponse(_file_slice(handle, start, end), status=206, content_type=content_type)
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
        response["Content-Length"] = str(end - start + 1)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    for key, value in headers.items():
        response[key] = value
    return response


DAMAGED_RETRY_SECONDS = 3600


def _damaged(request, release: Release, record) -> HttpResponse:
    """503: the file is out of service until repaired (JSON for API clients, a page for people)."""
    detail = (
        f"The file {record.name} of release {release.release_id} is damaged: its bytes do not match the"
        " recorded sha256. It is withheld while the release managers repair it."
    )
    if "application/json" in request.headers.get("Accept", ""):
        response: HttpResponse = JsonResponse(
            {"detail": detail, "code": "file_damaged", "release": release.release_id, "file": record.name},
            status=503,
        )
    else:
        response = render(
            request,
            "releases/file_damaged.html",
            {"release": release, "file": record, "detail": detail},
            status=503,
        )
    response["Retry-After"] = str(DAMAGED_RETRY_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def _content_type(name: str) -> str:
    for suffix, content_type in CONTENT_TYPES.items():
        if name.endswith(suffix):
            return content_type
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def _etag_matches(header: str, sha256: str) -> bool:
    if not header:
        return False
    if header.strip() == "*":
        return True
    tags = [tag.strip().removeprefix("W/") for tag in header.split(",")]
    return f'"{sha256}"' in tags


def _requested_range(request, sha256: str, size: int):
    """(start, end) inclusive for one satisfiable range; None to send everything; 'unsatisfiable'.

    Several ranges, or a malformed header, are ignored (the whole file is sent), as RFC 9110
    allows; so is a Range whose If-Range names another version.
    """
    header = request.headers.get("Range", "")
    if not header:
        return None
    if_range = request.headers.get("If-Range")
    if if_range is not None and if_range.strip() != f'"{sha256}"':
        return None
    match = _RANGE.match(header.strip())
    if match is None:
        return None
    first, last = match.groups()
    if first == "" and last == "":
        return None
    if first == "":  # the last N bytes
        length = int(last)
        if length == 0 or size == 0:
            return "unsatisfiable"
        return max(0, size - length), size - 1
    start = int(first)
    if last != "" and int(last) < start:
        return None  # malformed: ignored
    if start >= size:
        return "unsatisfiable"
    end = size - 1 if last == "" else min(int(last), size - 1)
    return start, end


def _file_slice(handle, start: int, end: int) -> Iterator[bytes]:
    with handle:
        handle.seek(start)
        remaining = end - start + 1
        while remaining > 0:
            block = handle.read(min(STREAM_BLOCK, remaining))
            if not block:
                return
            remaining -= len(block)
            yield block


def release_detail_url(release) -> str:
    """The public page of a release: by id once published, by row number before."""
    if release.status == ReleaseStatus.PUBLISHED and release.release_id:
        return reverse("releases:detail", kwargs={"release_id": release.release_id})
    return reverse("releases:build", kwargs={"pk": release.pk})
