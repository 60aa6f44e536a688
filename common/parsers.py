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


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with two differences: a number with a fraction or exponent keeps the text
    it was written with (JSONNumber), and JSON nested deeper than Python can parse is a 400, not a
    500. NaN and Infinity are refused, as DRF's strict mode does."""

    def parse(
        self, stream: IO[bytes], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return json.load(codecs.getreader(encoding)(stream), parse_float=JSONNumber, parse_constant=strict_constant)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
