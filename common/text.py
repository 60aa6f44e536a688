"""The one form text is stored in: LF line endings, no whitespace around the whole text.

Browsers send a textarea's text with CRLF line endings (the HTML standard says so), so an admin
save of a stored multi-line text would otherwise change its bytes and count as an edit of it; an
import document or an API client may send CR or CRLF too. Django's and DRF's form fields already
trim the whitespace around a text (an admin save or an API write did it, an import did not), so the
rule trims it on every way in, and a text saved through the admin keeps its bytes.

Everything else is kept byte for byte: the characters as sent (no Unicode normalisation), the
spaces, tabs and blank lines inside a text, and the trailing spaces of its inner lines.

Names (a model's, an alias, a task's: what readers match by eye) are the exception: `name_canonical`
stores them in NFKC, and `name_lookalike_error` refuses one that mixes lookalike letters of two
scripts, so that two entries never read the same while being different strings.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any


def text_canonical(text: str) -> str:
    """`text` with CRLF and lone CR line endings as LF and the whitespace around it removed."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def text_canonical_or_same(value: Any) -> Any:
    """`text_canonical` of a text; any other value (None, a number) as it is."""
    return text_canonical(value) if isinstance(value, str) else value


# ---------------------------------------------------------------- names

#: Letters of other scripts that read as a Latin letter (Unicode's confusables for the Latin
#: alphabet, the Cyrillic and Greek ones a keyboard or a PDF's text layer can hand a curator).
LATIN_LOOKALIKES = frozenset(
    "АВСЕНІЈКМОРЅТХУаеіјорсѕухԁԛԜԝӀ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοικνρτυχ"  # Greek
)


def name_canonical(text: str) -> str:
    """A name (a model's, its alias, a task's) in one form: NFKC (a full-width "ＤＮＡ" or a ligature
    "ﬁ" is the plain letters), then `text_canonical`. Quotes are never normalised: they are verbatim."""
    return text_canonical(unicodedata.normalize("NFKC", text))


def _script(char: str) -> str:
    """The script of a letter, as the first word of its Unicode name ("LATIN", "CYRILLIC", "GREEK")."""
    return unicodedata.name(char, "UNKNOWN").split(" ", 1)[0]


def name_lookalike_error(text: str) -> str | None:
    """Why a name would read the same as another spelled in other letters, or None: a word that mixes
    scripts ("HyеnaDNA" with a Cyrillic е), or a word of another script made only of letters that look
    Latin beside Latin words ("NT ВЕRT"). Names whose words each keep to one script pass ("β-VAE")."""
    words = re.findall(r"[^\W\d_]+", text)
    scripts_of = [{_script(char) for char in word if unicodedata.category(char).startswith("L")} for word in words]
    for word, scripts in zip(words, scripts_of, strict=True):
        if len(scripts) > 1:
            others = [char for char in word if _script(char) != "LATIN"] if "LATIN" in scripts else list(word)
            return _lookalike_message(text, word, others[0], scripts)
    if any(scripts == {"LATIN"} for scripts in scripts_of):
        for word, scripts in zip(words, scripts_of, strict=True):
            if scripts != {"LATIN"} and all(char in LATIN_LOOKALIKES for char in word):
                return _lookalike_message(text, word, word[0], scripts | {"LATIN"})
    return None


def _lookalike_message(text: str, word: str, char: str, scripts: set[str]) -> str:
    names = " and ".join(sorted(script.title() for script in scripts))
    return (
        f"{text!r} mixes {names} letters, which can look alike ({word!r} has {char!r}, "
        f"U+{ord(char):04X} {unicodedata.name(char, 'unknown')}): type it in one script"
    )
