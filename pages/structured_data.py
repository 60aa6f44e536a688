"""schema.org `Dataset` descriptions (JSON-LD) of a protocol's results and of a task's, for dataset
search engines: what is measured and in which unit, where it comes from, the licence, and the
downloads. The release page's comes from releases.citation."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse

from records.models import Dataset, Protocol, Source
from releases.citation import publisher

# Dataset search engines read a description of 50 to 5,000 characters.
_PROVENANCE = "Each value is given with its source, the locator of its table or figure and a verbatim quote."
_MAX_DESCRIPTION = 5000


def _described(*parts: str) -> str:
    text = " ".join(part.strip() for part in parts if part and part.strip())
    return text if len(text) <= _MAX_DESCRIPTION else text[: _MAX_DESCRIPTION - 1].rstrip() + "…"


def _common(request: HttpRequest, *, name: str, description: str, url: str, identifier: str) -> dict[str, object]:
    """What every Dataset of the portal says: the release citation's publisher, creator and licence."""
    portal = publisher(request=request)
    return {
        "@context": "https://schema.org",
        "@type": "Dataset",
        "name": name,
        "description": description,
        "url": request.build_absolute_uri(url),
        "identifier": identifier,
        "license": portal.licence.url,
        "isAccessibleForFree": True,
        "creator": {"@type": "Organization", "name": portal.creator},
        "publisher": {"@type": "Organization", "name": portal.name},
        "includedInDataCatalog": {
            "@type": "DataCatalog",
            "name": portal.name,
            "url": request.build_absolute_uri(reverse("pages:home")),
        },
    }


def _based_on(source: Source | None) -> dict[str, object]:
    if source is None:
        return {}
    work: dict[str, object] = {"@type": "CreativeWork", "name": source.title}
    if source.doi:
        work["identifier"] = f"https://doi.org/{source.doi}"
    if source.url:
        work["url"] = source.url
    return {"isBasedOn": work}


def protocol_dataset(*, protocol: Protocol, request: HttpRequest) -> dict[str, object]:
    """The protocol's results as a Dataset: the metric measured, the paper, the CSV and JSON downloads."""
    rows = {
        extension: request.build_absolute_uri(
            reverse("pages:protocol-rows", kwargs={"stable_id": protocol.stable_id, "extension": extension})
        )
        for extension in ("csv", "json")
    }
    metric = {"@type": "PropertyValue", "name": protocol.metric_name, "unitText": protocol.metric_unit}
    if protocol.metric_description:
        metric["description"] = protocol.metric_description
    return {
        **_common(
            request,
            name=f"{protocol.title}: results",
            description=_described(
                protocol.summary, f"Results of genomic foundation models in {protocol.metric_name}.", _PROVENANCE
            ),
            url=protocol.get_absolute_url(),
            identifier=protocol.stable_id,
        ),
        "variableMeasured": metric,
        **_based_on(protocol.source),
        "distribution": [
            {"@type": "DataDownload", "encodingFormat": "text/csv", "contentUrl": rows["csv"]},
            {"@type": "DataDownload", "encodingFormat": "application/json", "contentUrl": rows["json"]},
        ],
    }


def task_dataset(*, dataset: Dataset, request: HttpRequest) -> dict[str, object]:
    """A task's (or dataset's) results across protocols as a Dataset."""
    described = _common(
        request,
        name=f"{dataset.name}: results across protocols",
        description=_described(
            dataset.description,
            f"Results of genomic foundation models on {dataset.name}, across the protocols that score it.",
            _PROVENANCE,
        ),
        url=dataset.get_absolute_url(),
        identifier=dataset.stable_id,
    )
    if dataset.metric:
        described["variableMeasured"] = dataset.metric
    if dataset.suite_id is not None:
        suite = dataset.suite
        described["isPartOf"] = {
            "@type": "Dataset",
            "name": suite.name,
            "url": request.build_absolute_uri(suite.get_absolute_url()),
        }
    return {**described, **_based_on(dataset.source)}
