"""Works and their versions: finding a work by any identifier of its versions, and telling a new
version of a work from a duplicate of a source already catalogued.

Rules (a second source is refused with the record it duplicates named):
- a DOI names one version: another source with it is a duplicate;
- an arXiv id, a URL (a repository's) or a near-identical title may be shared only by versions of
  one work: another arXiv version, another commit, the conference paper of a preprint. A source
  that shares one with a source of another work (or of none) must be put in that work.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import TYPE_CHECKING

from records.models.catalogue import normalise_arxiv_id, normalise_doi

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from records.models import Source, Work

# Two titles this alike (difflib's ratio of their normalised forms) are taken for one work's.
NEAR_TITLE_RATIO = 0.9
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^/?#]+?)(v\d+)?(?:\.pdf)?/?$", re.IGNORECASE)


def title_key(title: str) -> str:
    """A title in one spelling: accents, case, punctuation and spacing do not count."""
    folded = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode().lower()
    return " ".join(re.findall(r"[a-z0-9]+", folded))


def titles_near(first: str, second: str) -> bool:
    a, b = title_key(first), title_key(second)
    if not a or not b:
        return False
    return a == b or difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= NEAR_TITLE_RATIO


def _same_work(source: Source, other_work_id: int | None) -> bool:
    return source.work_id is not None and source.work_id == other_work_id


def _work_hint(other_work: str | None) -> str:
    return f"put this source in work {other_work!r}" if other_work else "give both sources one work"


def source_duplicates(*, source: Source) -> dict[str, str]:
    """Field -> why `source` duplicates a catalogued source ({} when it does not)."""
    from records.models import Source

    others = Source.objects.exclude(pk=source.pk).select_related("work")
    errors: dict[str, str] = {}
    if source.doi:
        other = others.filter(doi__iexact=source.doi).first()
        if other is not None:
            errors["doi"] = f"source {other.stable_id!r} already has this DOI: use it instead of creating a duplicate"
    if source.arxiv_id:
        for other in others.filter(arxiv_id=source.arxiv_id):
            if other.arxiv_version == source.arxiv_version:
                errors["arxiv_id"] = (
                    f"source {other.stable_id!r} is already this arXiv id"
                    + (f" at {source.arxiv_version}" if source.arxiv_version else "")
                    + ": use it instead of creating a duplicate"
                )
                break
            if not _same_work(source, other.work_id):
                errors["arxiv_id"] = f"source {other.stable_id!r} is another version of this arXiv id: " + _work_hint(
                    other.work.stable_id if other.work else None
                )
                break
    if source.url:
        for other in others.filter(url=source.url):
            if other.commit == source.commit:
                errors["url"] = (
                    f"source {other.stable_id!r} already has this URL: use it instead of creating a duplicate"
                )
                break
            if not _same_work(source, other.work_id):
                errors["url"] = f"source {other.stable_id!r} is this URL at another commit: " + _work_hint(
                    other.work.stable_id if other.work else None
                )
                break
    if source.title and "title" not in errors:
        for stable_id, title, work_id, work in others.values_list("stable_id", "title", "work_id", "work__stable_id"):
            if not _same_work(source, work_id) and titles_near(source.title, title):
                errors["title"] = (
                    f"source {stable_id!r} has a near-identical title ({title!r}): if this is a version of the same "
                    f"work, {_work_hint(work)}; otherwise use that source"
                )
                break
    return errors


def identifier_normalised(identifier: str) -> tuple[str, str]:
    """(field, value) an identifier names: a DOI, an arXiv id (with or without its version and
    abs/pdf URL) or a URL."""
    text = (identifier or "").strip()
    match = _ARXIV_URL.search(text)
    if match:
        return "arxiv_id", match.group(1)
    doi = normalise_doi(text)
    if doi.startswith("10."):
        return "doi", doi
    if text.lower().startswith(("http://", "https://")):
        return "url", text
    return "arxiv_id", re.sub(r"v\d+$", "", normalise_arxiv_id(text))


def _by_identifier(identifier: str) -> QuerySet[Source]:
    """The sources with this DOI (any case), arXiv id (any version) or URL."""
    from records.models import Source

    name, value = identifier_normalised(identifier)
    return Source.objects.filter(**({"doi__iexact": value} if name == "doi" else {name: value}))


def source_find(*, identifier: str) -> Source | None:
    """The source with this stable id, or else with this DOI, arXiv id or URL (its latest arXiv
    version first); None when none has."""
    from records.models import Source

    found = Source.objects.filter(stable_id=identifier).first()
    return found or _by_identifier(identifier).order_by("-arxiv_version", "stable_id").first()


def work_find(*, identifier: str) -> Work | None:
    """The work one of whose versions has this DOI, arXiv id or URL (None when none has)."""
    source = _by_identifier(identifier).exclude(work=None).select_related("work").first()
    return source.work if source is not None else None
