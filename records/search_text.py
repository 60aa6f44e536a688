"""Spellings for search, the same on the indexed side and the query's: a name printed "DNABERT-2",
"DNABERT2" or "DNABERT 2" is one name.

The full text indexes (PostgreSQL's parser, SQLite's unicode61 tokenizer) split "DNABERT-2" into
"dnabert" and "2" and keep "DNABERT2" as one word. So the index also holds each name's folded
spellings (records.models.alias_key: case, spaces and punctuation do not count), and a query
tries a word's folded spelling beside the word itself: "dnabert2" finds "DNABERT-2" by its folded
spelling, and "dnabert 2" finds "DNABERT2" by the folded spelling of the two words together. Two
words are read together when the second is a number or version that belongs to the first
("DNABERT 2", "NT v2", "HyenaDNA 1kb", "NT-v2 500M"): the attached word.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal

from records.models import alias_key
from records.values import ValueInvalid, parse_exact

MAX_QUERY_LENGTH = 200
MAX_WORDS = 12
# Names of up to this many words are also indexed as one folded spelling ("hyenadnatiny1k").
WHOLE_NAME_WORDS = 6
# A number or a version: "2", "500M", "1.6M", "v2", "1kb", "3-mer".
_ATTACHED = re.compile(r"v?\d[\w.+-]*", re.IGNORECASE)
_EDGE_PUNCTUATION = "()[]{},;:!?\"'"
# Inside a word, what separates two names ("MAGICS-LAB/DNABERT_2", "(DNABERT-2,"); a hyphen, an
# underscore, a point or a plus joins the parts of one ("DNABERT-2", "promoter_all", "1.6M").
_PIECES = re.compile(r"[/\\()\[\]{},;:!?\"'|]+")


@functools.lru_cache(maxsize=100_000)
def is_attached(word: str) -> bool:
    """Whether `word` is a number or version that belongs to the word before it."""
    return bool(_ATTACHED.fullmatch(word.strip(_EDGE_PUNCTUATION)))


@functools.lru_cache(maxsize=100_000)
def _fold(word: str) -> str:
    return alias_key(word)


@functools.lru_cache(maxsize=100_000)
def _word_spellings(word: str) -> tuple[str, ...]:
    """The folded spellings of one word and of each name inside it."""
    pieces = [piece for piece in _PIECES.split(word) if piece]
    found = []
    for part in dict.fromkeys([word, *pieces]):
        key = _fold(part)
        # A name inside a longer word is indexed as such even when spelled plainly: a backend
        # may read the whole as one token (PostgreSQL reads "HyenaDNA/Caduceus" as a path).
        if key and (key != part.casefold() or (len(pieces) > 1 and part != word)):
            found.append(key)
    return tuple(found)


@functools.lru_cache(maxsize=50_000)  # a protocol's title, a configuration's name: repeated on many entries
def spellings(text: str, *, whole: bool = False) -> tuple[str, ...]:
    """The folded spellings indexed beside `text`: each word with punctuation, and each name inside
    it ("DNABERT-2" -> "dnabert2", "MAGICS-LAB/DNABERT_2" -> also "dnabert2"), each word with the
    attached word after it ("DNABERT 2" -> "dnabert2"), and with `whole` a short name as one
    spelling ("HyenaDNA tiny 1k" -> "hyenadnatiny1k")."""
    words = (text or "").split()
    found: dict[str, None] = {}
    for word in words:
        found.update(dict.fromkeys(_word_spellings(word)))
    for first, second in zip(words, words[1:], strict=False):
        if second[:1].isalnum() and is_attached(second) and not is_attached(first):
            key = _fold(first) + _fold(second)
            if key:
                found[key] = None
    if whole and 1 < len(words) <= WHOLE_NAME_WORDS:
        key = "".join(_fold(word) for word in words)
        if key:
            found[key] = None
    return tuple(found)


def indexed(*texts: str, whole: bool = False) -> str:
    """`texts` joined, then their folded spellings: one text column of the search index."""
    present = [text for text in texts if text]
    keys = [key for text in present for key in spellings(text, whole=whole)]
    return " ".join([*present, *dict.fromkeys(keys)])


def name_keys(*names: str) -> str:
    """' key key ': the names in one spelling each, for "the query names this record"."""
    keys = dict.fromkeys(key for key in (alias_key(name) for name in names if name) if key)
    return f" {' '.join(keys)} " if keys else ""


@dataclass(frozen=True)
class Segment:
    """One word of a query, or a word with its attached word; `key` is its folded spelling when
    that differs from the word as typed."""

    words: tuple[str, ...]
    key: str


@dataclass(frozen=True)
class ParsedQuery:
    text: str  # the query as searched: printable characters, single spaces, at most MAX_QUERY_LENGTH
    segments: tuple[Segment, ...]
    whole_key: str  # the whole query in one spelling, when it has several words
    number: Decimal | None  # the query read as a number (it finds results with that value)
    dropped_words: int  # words past MAX_WORDS, left out of the search

    @property
    def key(self) -> str:
        return alias_key(self.text)

    @property
    def words(self) -> list[str]:
        return [word for segment in self.segments for word in segment.words]

    @property
    def adjacent_pairs(self) -> list[str]:
        """Each two neighbouring one-word segments, as a phrase ("NT benchmark", "benchmark promoter")."""
        return [
            f"{first.words[0]} {second.words[0]}"
            for first, second in zip(self.segments, self.segments[1:], strict=False)
            if len(first.words) == len(second.words) == 1
        ]


def _printable(text: str) -> str:
    """Control characters (NUL included: PostgreSQL refuses it in text) become spaces."""
    return "".join(char if not unicodedata.category(char).startswith("C") else " " for char in text)


def query_parse(text: str) -> ParsedQuery:
    """The query as the backends search it. Words without a letter or digit ("-", "+") are left
    out: they match nothing in either backend's index."""
    text = " ".join(_printable(text or "").split())[:MAX_QUERY_LENGTH].strip()
    words = [word for word in text.split() if any(char.isalnum() for char in word)]
    dropped = max(0, len(words) - MAX_WORDS)
    words = words[:MAX_WORDS]
    segments: list[Segment] = []
    index = 0
    while index < len(words):
        word = words[index]
        following = words[index + 1] if index + 1 < len(words) else ""
        if following and is_attached(following) and not is_attached(word):
            segments.append(Segment(words=(word, following), key=alias_key(word + following)))
            index += 2
            continue
        key = alias_key(word)
        segments.append(Segment(words=(word,), key=key if key != word.casefold() else ""))
        index += 1
    number = None
    if len(words) == 1:
        try:
            number = parse_exact(words[0])
        except ValueInvalid:
            number = None
    whole_key = alias_key(" ".join(words)) if len(words) > 1 else ""
    return ParsedQuery(text=text, segments=tuple(segments), whole_key=whole_key, number=number, dropped_words=dropped)
