"""Request parsers of the API (a module of its own: DRF's settings import it while loading views)."""

from __future__ import annotations

import codecs
import json
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant


class JSONNumber(float):
    """A JSON number with a fraction or exponent: a float to every field that takes one, and its text
    as written (`json_text`, also its str()) to the exact decimals (records.values.parse_exact) and
    text fields, so 0.410 keeps its trailing zero and 3e-12 its digits."""

    json_text: str

    def __new__(cls, text: str) -> JSONNumber:
        number = super().__new__(cls, text)
        number.json_text = text
        return number

    def __str__(self) -> str:
        """A text field given a number keeps what was written ("0.410", not "0.41")."""
        return self.json_text


class DuplicateKey(ValueError):
    """A JSON object names one key twice (`json` would keep the last value silently)."""

    def __init__(self, key: str, path: str):
        super().__init__(f"duplicate key {key!r} at {path}")
        self.key = key
        self.path = path


class _Duplicated(dict):
    """An object of the document that named `key` twice (found by `_find_duplicate`)."""

    key: str


def _object(pairs: list[tuple[str, Any]]) -> dict:
    """json's object_pairs_hook: the object as a dict, marked when it names a key twice."""
    result = dict(pairs)
    if len(result) == len(pairs):
        return result
    duplicated = _Duplicated(result)
    seen: set[str] = set()
    for key, _value in pairs:
        if key in seen:
            duplicated.key = key
            break
        seen.add(key)
    return duplicated


def _find_duplicate(value: Any, path: str) -> DuplicateKey | None:
    """The first object (in document order) that named a key twice, with its path (`a.b[2].c`)."""
    if isinstance(value, dict):
        if isinstance(value, _Duplicated):
            return DuplicateKey(value.key, f"{path}.{value.key}" if path else value.key)
        for key, inner in value.items():
            if found := _find_duplicate(inner, f"{path}.{key}" if path else key):
                return found
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            if found := _find_duplicate(inner, f"{path}[{index}]"):
                return found
    return None


def json_load_strict(stream: IO[str] | codecs.StreamReader, **options: Any) -> Any:
    """`json.load` refusing an object that names a key twice (DuplicateKey: the key and its path)."""
    found: list[bool] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict:
        result = _object(pairs)
        if isinstance(result, _Duplicated):
            found.append(True)
        return result

    document = json.load(stream, object_pairs_hook=hook, **options)
    if found:
        raise _find_duplicate(document, "") or DuplicateKey("?", "?")
    return document


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with three differences: a number with a fraction or exponent keeps the
    text it was written with (JSONNumber), an object that names a key twice is a 400 naming the key
    and its path (json would keep the last value), and JSON nested deeper than Python can parse is
    a 400, not a 500. NaN and Infinity are refused, as DRF's strict mode does."""

    def parse(
        self, stream: IO[bytes], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return json_load_strict(
                codecs.getreader(encoding)(stream), parse_float=JSONNumber, parse_constant=strict_constant
            )
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
