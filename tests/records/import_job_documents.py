"""Import documents for the import-job tests: the seed document, grown to any number of results."""

from __future__ import annotations

import json
import time

from records.seed import seed_document

EVALUATION = "nt-500m-ia3-finetune-runtime-dalla-torre-2025"


def document_with_results(extra: int) -> dict:
    """The seed document with `extra` more results of its first evaluation (each its own value)."""
    document = seed_document()
    results = document["evaluations"][0]["results"]
    first = results[0]
    for index in range(extra):
        result = dict(first)
        result["stable_id"] = f"{first['stable_id']}-{index}"
        result["value"] = f"{20 + index}.50"
        result["printed_value"] = f"{20 + index}.50 min"
        result["quote_mismatch_reason"] = "Grown by the tests: a value the seed's quote does not print."
        results.append(result)
    return document


def as_json(document: dict) -> str:
    return json.dumps(document)


def wait_for(check, *, timeout: float, what: str, worker=None, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)
    log = worker.log()[-4000:] if worker else ""
    raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{log}")
