"""Protocol and task pages carry a schema.org Dataset (JSON-LD) with what dataset search engines
require (a name, a description of 50 to 5,000 characters) and what they use: the page, the licence,
the metric and its unit, the paper it comes from, the downloads, each reachable."""

from __future__ import annotations

import json
import re

import pytest

from records.models import Dataset, Protocol
from records.seed import PROTOCOL_ID

pytestmark = pytest.mark.django_db

# The schema.org Dataset properties these pages use (https://schema.org/Dataset).
DATASET_PROPERTIES = {
    "@context", "@type", "name", "description", "url", "identifier", "license", "isAccessibleForFree",
    "creator", "publisher", "includedInDataCatalog", "variableMeasured", "isBasedOn", "distribution", "isPartOf",
}  # fmt: skip


def dataset_of(html: str) -> dict:
    (block,) = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    return json.loads(block)


def test_the_protocol_page_describes_its_results_as_a_dataset(seeded, client):
    protocol = Protocol.objects.get(stable_id=PROTOCOL_ID)
    dataset = dataset_of(client.get(f"/protocols/{PROTOCOL_ID}/").content.decode())
    assert dataset["@type"] == "Dataset" and set(dataset) <= DATASET_PROPERTIES
    assert dataset["name"] == f"{protocol.title}: results"
    assert 50 <= len(dataset["description"]) <= 5000
    assert dataset["url"] == f"http://testserver/protocols/{PROTOCOL_ID}/"
    assert dataset["license"] == "https://creativecommons.org/licenses/by/4.0/"
    assert dataset["variableMeasured"]["unitText"] == protocol.metric_unit
    assert dataset["isBasedOn"]["name"] == protocol.source.title
    for download in dataset["distribution"]:
        response = client.get(download["contentUrl"].removeprefix("http://testserver"))
        assert response.status_code == 200 and response["Content-Type"].startswith(download["encodingFormat"])


def test_the_task_page_describes_its_results_as_a_dataset(seeded, client):
    task = Dataset.objects.order_by("pk").first()
    dataset = dataset_of(client.get(f"/datasets/{task.stable_id}/").content.decode())
    assert set(dataset) <= DATASET_PROPERTIES
    assert dataset["name"] == f"{task.name}: results across protocols"
    assert 50 <= len(dataset["description"]) <= 5000
    assert client.get(dataset["url"].removeprefix("http://testserver")).status_code == 200
    assert dataset["includedInDataCatalog"]["url"] == "http://testserver/"
