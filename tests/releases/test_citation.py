"""A release's citation: the plain text and BibTeX a reader copies, the DataCite metadata a DOI
registrar takes (checked by the DataCite kernel-4.5 schema in DataCite's `datacite` library) and
the schema.org Dataset a crawler reads."""

from __future__ import annotations

import datetime
import re

from datacite import schema45

from releases.bundle.citation import (
    Licence,
    ReleaseCitation,
    citation_bibtex,
    citation_datacite,
    citation_schema_org,
    citation_text,
)

CC_BY = Licence(
    "CC-BY-4.0", "Creative Commons Attribution 4.0 International", "https://creativecommons.org/licenses/by/4.0/"
)

# Google Dataset Search reads these schema.org Dataset properties (name and description required,
# the description 50 to 5,000 characters); https://schema.org/Dataset lists them all.
SCHEMA_ORG_DATASET_PROPERTIES = {
    "@context",
    "@type",
    "name",
    "description",
    "url",
    "identifier",
    "version",
    "datePublished",
    "license",
    "isAccessibleForFree",
    "keywords",
    "creator",
    "publisher",
    "citation",
    "distribution",
    "sameAs",
    "temporalCoverage",
    "spatialCoverage",
    "variableMeasured",
    "includedInDataCatalog",
    "measurementTechnique",
    "dateModified",
    "funder",
}


def a_release(**changes: object) -> ReleaseCitation:
    values: dict[str, object] = {
        "release_id": "2026-12-03-0123456789ab",
        "release_date": datetime.date(2026, 12, 3),
        "publisher": "Rewire",
        "url": "https://portal.example.org/releases/2026-12-03-0123456789ab/",
        "licence": CC_BY,
        "description": "Curated benchmark results of genomic foundation models, each value with its "
        "source, locator and verbatim quote.",
        "keywords": ("genomic foundation models", "benchmarks"),
        "download_url": "https://portal.example.org/releases/2026-12-03-0123456789ab/bundle.tar.gz",
        "download_bytes": 123456,
    }
    values.update(changes)
    return ReleaseCitation(**values)  # type: ignore[arg-type]


def test_its_datacite_metadata_passes_the_datacite_kernel_4_5_schema():
    metadata = citation_datacite(a_release())
    assert schema45.validate(metadata), list(schema45.validator.iter_errors(metadata))
    xml = schema45.tostring(metadata)
    assert '<resourceType resourceTypeGeneral="Dataset">' in xml
    assert "2026-12-03-0123456789ab" in xml
    assert 'rightsIdentifier="CC-BY-4.0"' in xml


def test_the_datacite_schema_refuses_metadata_missing_a_required_property():
    metadata = citation_datacite(a_release())
    del metadata["publisher"]
    assert not schema45.validate(metadata)


def test_the_plain_text_names_creator_year_title_version_and_url():
    text = citation_text(a_release())
    assert text == (
        "Rewire curators (2026). Rewire benchmark evidence, release 2026-12-03-0123456789ab [Data set]. "
        "Version 2026-12-03-0123456789ab. Rewire. https://portal.example.org/releases/2026-12-03-0123456789ab/"
    )


def test_bibtex_escapes_what_tex_reads_as_commands_and_keeps_braces_balanced():
    entry = citation_bibtex(a_release(publisher="R&D {lab} 100%_x"))
    assert entry.startswith("@misc{R_D_lab_100_x_2026_12_03_0123456789ab,\n")
    assert r"author = {{R\&D \{lab\} 100\%\_x curators}}" in entry
    depth = 0
    for character, before in zip(entry, " " + entry, strict=False):
        if before == "\\":
            continue
        depth += {"{": 1, "}": -1}.get(character, 0)
        assert depth >= 0
    assert depth == 0
    assert re.search(r"^  year = \{2026\},$", entry, re.M)


def test_the_schema_org_dataset_has_what_dataset_search_requires():
    dataset = citation_schema_org(a_release())
    assert dataset["@type"] == "Dataset"
    assert set(dataset) <= SCHEMA_ORG_DATASET_PROPERTIES
    assert dataset["name"] and 50 <= len(str(dataset["description"])) <= 5000
    assert dataset["license"] == CC_BY.url
    assert dataset["distribution"] == [
        {"@type": "DataDownload", "encodingFormat": "application/gzip", "contentUrl": a_release().download_url}
    ]


def test_an_external_release_without_files_has_no_download():
    dataset = citation_schema_org(a_release(download_url="", download_bytes=None))
    assert "distribution" not in dataset
    assert "sizes" not in citation_datacite(a_release(download_url="", download_bytes=None))
