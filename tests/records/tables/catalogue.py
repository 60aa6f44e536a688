"""The part of a shipped example a table draft matches against: HyenaDNA's and Caduceus's works,
sources, models and aliases, and the Genomic Benchmarks suite, from data/examples/02 (no protocol,
configuration or evaluation)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
EXAMPLE = ROOT / "data" / "examples" / "02-nt-benchmark-hyenadna-caduceus.json"
KEPT = {"format", "version", "title", "works", "sources", "models", "model_aliases"}


def example() -> dict:
    return json.loads(EXAMPLE.read_text(encoding="utf-8"), parse_float=Decimal)


def catalogue_document() -> dict:
    document = {key: value for key, value in example().items() if key in KEPT}
    document["title"] = "table draft tests: the catalogue"
    held = {model["stable_id"] for model in document["models"]}
    document["model_aliases"] = [alias for alias in document.get("model_aliases", []) if alias["model"] in held]
    document["datasets"] = [d for d in example()["datasets"] if d["stable_id"] == "hyena-genomic-benchmarks-8-tasks"]
    return document


def catalogue_load() -> None:
    from records.imports import records_import

    records_import(document=catalogue_document(), actor=None)


def pasted(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def request_of(name: str) -> dict:
    return {**json.loads(pasted("caduceus-table-1.request.json")), "text": pasted(name)}


def reference() -> dict:
    return json.loads(pasted("caduceus-table-1.reference.json"))
