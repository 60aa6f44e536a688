"""The one form text is stored in: LF line endings, no whitespace around the whole text.

Browsers send a textarea's text with CRLF line endings (the HTML standard says so), so an admin
save of a stored multi-line text would otherwise change its bytes and count as an edit of it; an
import document or an API client may send CR or CRLF too. Django's and DRF's form fields already
trim the whitespace around a text (an admin save or an API write did it, an import did not), so the
rule trims it on every way in, and a text saved through the admin keeps its bytes.

Everything else is kept byte for byte: the characters as sent (no Unicode normalisation), the
spaces, tabs and blank lines inside a text, and the trailing spaces of its inner lines.
"""

from __future__ import annotations

from typing import Any


def text_canonical(text: str) -> str:
    """`text` with CRLF and lone CR line endings as LF and the whitespace around it removed."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def text_canonical_or_same(value: Any) -> Any:
    """`text_canonical` of a text; any other value (None, a number) as it is."""
    return text_canonical(value) if isinstance(value, str) else value
