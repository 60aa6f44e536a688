"""Request parsers of the API (a module of its own: DRF's settings import it while loading views)."""

import codecs
import json
from decimal import Decimal

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with two differences: a JSON number with a fraction or exponent is read as
    a Decimal (so 0.410 keeps its trailing zero and 3e-12 its exact digits), and JSON nested deeper
    than Python can parse is a 400, not a 500. NaN and Infinity are refused, as DRF's strict mode does."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return json.load(codecs.getreader(encoding)(stream), parse_float=Decimal, parse_constant=strict_constant)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
