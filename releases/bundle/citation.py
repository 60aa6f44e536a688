"""How a release is cited: a plain-text reference, BibTeX, DataCite metadata (kernel 4.5, as the
DataCite REST API takes it, ready for a DOI registrar) and a schema.org `Dataset` (JSON-LD).

Plain values in, plain values out: the release page and the bundle's tag files both call these, so
the citation a reader copies and the metadata a registrar receives say the same thing.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

DATACITE_SCHEMA_VERSION = "http://datacite.org/schema/kernel-4"
DATACITE_JSON = "metadata/datacite.json"
"""The tag file (outside the payload, so the release id it names does not feed its own hash)."""


def curators_of(publisher: str) -> str:
    """The creator of the data: the publishing portal's curators, as one organisation."""
    return f"{publisher} curators"


@dataclass(frozen=True)
class Licence:
    spdx_id: str
    name: str
    url: str


@dataclass(frozen=True)
class Publisher:
    """Who publishes the releases and under which terms: what every release's citation shares."""

    name: str  # the portal's name: the publisher and, as its curators, the creator
    site_url: str  # the portal's address (scheme://host[:port]), no trailing slash
    licence: Licence
    description: str
    keywords: tuple[str, ...] = ()

    @property
    def creator(self) -> str:
        return curators_of(self.name)

    def release(
        self, *, release_id: str, release_date: datetime.date, download_url: str = "", download_bytes: int | None = None
    ) -> ReleaseCitation:
        return ReleaseCitation(
            release_id=release_id,
            release_date=release_date,
            publisher=self.name,
            url=f"{self.site_url}/releases/{release_id}/",
            licence=self.licence,
            description=self.description,
            keywords=self.keywords,
            download_url=download_url,
            download_bytes=download_bytes,
        )

    def package_metadata(self) -> dict[str, object]:
        """What datapackage.json says of the data's terms and makers (never the host or a date:
        the payload, and so the release id, depends only on the catalogue and these)."""
        return {
            "licenses": [{"name": self.licence.spdx_id, "path": self.licence.url, "title": self.licence.name}],
            "contributors": [{"title": self.creator, "role": "author"}],
            "keywords": list(self.keywords),
        }


@dataclass(frozen=True)
class ReleaseCitation:
    """What is cited: one published release of the catalogue."""

    release_id: str
    release_date: datetime.date
    publisher: str  # the portal's name: the publisher and, as its curators, the creator
    url: str  # the release's page (absolute)
    licence: Licence
    description: str
    keywords: tuple[str, ...] = ()
    download_url: str = ""  # the bundle (absolute), when the portal holds its files
    download_bytes: int | None = None

    @property
    def title(self) -> str:
        return f"{self.publisher} benchmark evidence, release {self.release_id}"

    @property
    def creator(self) -> str:
        return curators_of(self.publisher)


def citation_text(citation: ReleaseCitation) -> str:
    """One line in the usual order: creator (year). Title. Version. Publisher. URL."""
    return (
        f"{citation.creator} ({citation.release_date.year}). {citation.title} "
        f"[Data set]. Version {citation.release_id}. {citation.publisher}. {citation.url}"
    )


def _bibtex_value(text: str) -> str:
    """A field value in braces: TeX's special characters escaped, braces balanced."""
    escaped = re.sub(r"([\\{}])", lambda m: {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}"}[m.group(1)], text)
    return re.sub(r"([&%$#_])", r"\\\1", escaped).replace("~", r"\textasciitilde{}").replace("^", r"\^{}")


def citation_bibtex(citation: ReleaseCitation) -> str:
    """A BibTeX `@misc` entry; the creator is an organisation, so it is braced as one name."""
    key = re.sub(r"[^A-Za-z0-9]+", "_", f"{citation.publisher}_{citation.release_id}").strip("_")
    fields = [
        ("author", "{" + _bibtex_value(citation.creator) + "}"),
        ("title", "{" + _bibtex_value(citation.title) + "}"),
        ("publisher", _bibtex_value(citation.publisher)),
        ("year", str(citation.release_date.year)),
        ("version", _bibtex_value(citation.release_id)),
        ("url", citation.url),
        ("note", _bibtex_value(f"Data set; licence {citation.licence.spdx_id}")),
    ]
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@misc{{{key},\n{body}\n}}\n"


def citation_datacite(citation: ReleaseCitation) -> dict[str, object]:
    """DataCite metadata (kernel 4.5) without a DOI: a registrar assigns one when it is deposited."""
    metadata: dict[str, object] = {
        "types": {"resourceTypeGeneral": "Dataset", "resourceType": "Benchmark evidence release"},
        "creators": [{"name": citation.creator, "nameType": "Organizational"}],
        "titles": [{"title": citation.title}],
        "publisher": {"name": citation.publisher},
        "publicationYear": str(citation.release_date.year),
        "dates": [{"date": citation.release_date.isoformat(), "dateType": "Issued"}],
        "version": citation.release_id,
        "url": citation.url,
        "alternateIdentifiers": [{"alternateIdentifier": citation.url, "alternateIdentifierType": "URL"}],
        "rightsList": [
            {
                "rights": citation.licence.name,
                "rightsUri": citation.licence.url,
                "rightsIdentifier": citation.licence.spdx_id,
                "rightsIdentifierScheme": "SPDX",
            }
        ],
        "descriptions": [{"description": citation.description, "descriptionType": "Abstract"}],
        "subjects": [{"subject": keyword} for keyword in citation.keywords],
        "formats": ["text/csv", "application/json"],
        "language": "en",
        "schemaVersion": DATACITE_SCHEMA_VERSION,
    }
    if citation.download_bytes is not None:
        metadata["sizes"] = [f"{citation.download_bytes} bytes"]
    return metadata


def citation_schema_org(citation: ReleaseCitation) -> dict[str, object]:
    """A schema.org `Dataset` (JSON-LD) with what Google Dataset Search asks for."""
    dataset: dict[str, object] = {
        "@context": "https://schema.org",
        "@type": "Dataset",
        "name": citation.title,
        "description": citation.description,
        "url": citation.url,
        "identifier": citation.release_id,
        "version": citation.release_id,
        "datePublished": citation.release_date.isoformat(),
        "license": citation.licence.url,
        "isAccessibleForFree": True,
        "keywords": list(citation.keywords),
        "creator": {"@type": "Organization", "name": citation.creator},
        "publisher": {"@type": "Organization", "name": citation.publisher},
        "citation": citation_text(citation),
    }
    if citation.download_url:
        dataset["distribution"] = [
            {"@type": "DataDownload", "encodingFormat": "application/gzip", "contentUrl": citation.download_url}
        ]
    return dataset
