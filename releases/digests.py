"""Membership digests: the sha256 of the JSON text of a record's exported values, in column order.

The JSON is `json.dumps(values, ensure_ascii=False, separators=(",", ":"))` with decimals as their
exact text and dates as ISO strings, of the values as read (not of the cells: a cell cannot tell an
empty string from none), so a digest equals the one every earlier release of this format recorded.
`json_items` gives the text of a run of values without its brackets, so that a row's text can be
put together from runs encoded once (`releases.matrix`: an evaluation's columns, once per evaluation).
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import json
import json.encoder
from collections.abc import Iterable

from releases.bundle import serialise_decimal

encode_string = json.encoder.encode_basestring  # the text a str value takes in digest_text (C where built)


def _json_value(value: object) -> object:
    if isinstance(value, decimal.Decimal):
        return serialise_decimal(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not exportable")


# One encoder for every digest, made once: `json.dumps` makes an encoder per call, and
# `JSONEncoder.encode` the C encoder's closure per call. The text is the same (a test compares them).
_DIGEST_JSON = json.JSONEncoder(default=_json_value, ensure_ascii=False, separators=(",", ":"))
_C_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_C_DIGEST_ENCODER = (
    None
    if _C_MAKE_ENCODER is None
    else _C_MAKE_ENCODER(None, _json_value, json.encoder.encode_basestring, None, ":", ",", False, False, True)
)


def digest_text(values: list | tuple) -> str:
    """The JSON text a digest hashes: `json.dumps(values, ensure_ascii=False, separators=(",", ":"))`."""
    if _C_DIGEST_ENCODER is None:
        return _DIGEST_JSON.encode(values)
    return "".join(_C_DIGEST_ENCODER(values, 0))


def content_digest(values: Iterable[object]) -> str:
    """sha256 of a record's exported values, in column order (the membership's content hash).

    The JSON text of the values as read (not of the cells: a cell cannot tell an empty string from
    none), so a digest equals the one every earlier release of this format recorded.
    """
    text = digest_text(values if isinstance(values, (list, tuple)) else list(values))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def json_items(values: list | tuple) -> str:
    """`digest_text(values)` without its brackets: the run's items joined by commas ("" for none)."""
    return digest_text(values)[1:-1]


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
