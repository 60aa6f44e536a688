"""CITATION.cff is valid Citation File Format 1.2.0: checked against the format's own JSON schema,
tests/citation-file-format-1.2.0.schema.json, copied unchanged from the citation-file-format project
(Copyright 2017 Stephan Druskat, CC-BY-SA-4.0). cffconvert, the format's validator, is not used: it
pins jsonschema below 4, and the API's schema tools need 4."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = Path(__file__).with_name("citation-file-format-1.2.0.schema.json")


def test_the_citation_file_is_valid_cff_1_2_0():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    errors = [
        f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
        for error in Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER).iter_errors(citation)
    ]
    assert not errors, errors
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software"


def test_the_schema_check_refuses_a_citation_without_authors():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    del citation["authors"]
    assert [error.message for error in Draft7Validator(schema).iter_errors(citation)] == [
        "'authors' is a required property"
    ]
