"""common.text's one form of text: LF line endings, no whitespace around it, everything else as sent."""

from __future__ import annotations

import unicodedata

import pytest

from common.text import text_canonical, text_canonical_or_same

pytestmark = pytest.mark.backend_independent


@pytest.mark.parametrize(
    "sent, stored",
    [
        ("one\r\ntwo", "one\ntwo"),
        ("one\rtwo", "one\ntwo"),
        ("one\r\n\r\ntwo", "one\n\ntwo"),
        ("one\r\r\ntwo", "one\n\ntwo"),  # a lone CR, then a CRLF: two line endings
        ("\r\n  one\r\n", "one"),
        ("one", "one"),
    ],
)
def test_it_stores_crlf_and_lone_cr_as_lf_without_surrounding_whitespace(sent, stored):
    assert text_canonical(sent) == stored


@pytest.mark.parametrize(
    "kept",
    [
        "trailing spaces  \non an inner line",
        "a\ttab and  two spaces",
        unicodedata.normalize("NFD", "Café"),  # decomposed: not recomposed to NFC
        "ﬁ ligature and ² superscript",  # not folded by NFKC
        "a line\u2028separator and a\x85next line",
        "zero\u200bwidth",
    ],
)
def test_it_keeps_everything_else_byte_for_byte(kept):
    assert text_canonical(kept).encode() == kept.encode()


def test_it_is_idempotent_and_leaves_other_values_alone():
    once = text_canonical(" a\r\nb\rc ")
    assert text_canonical(once) == once
    assert [text_canonical_or_same(value) for value in (None, 3, " x\r\n")] == [None, 3, "x"]
