"""The search index read by each backend's full text search: which entries match a query, how many
of each kind, one page of them best first, and near spellings when none match.

Every word of the query is required (a word's folded spelling may stand for it, records.search_text);
a number searched also finds the results with that value. Relevance is the backend's text rank
(PostgreSQL: ts_rank over the weighted tsvector; SQLite: FTS5's bm25 with the same column
weights), scaled to [0, 1), a little more for each two words of the query found side by side, and
raised, in this order of strength, when the query is the record's stable id, names it (its name or
an alias in any spelling), or has every word in its own name (a named model before a named task,
before a named protocol, configuration, source, evaluation), or gives a result's value with its
printed digits.
"""

from __future__ import annotations

import functools
import operator
import re
from typing import Any, cast

from django.contrib.postgres.search import SearchQuery, SearchRank, TrigramSimilarity
from django.db import connection
from django.db.models import Case, F, FloatField, Func, Q, Value, When

from records.models.search import SearchEntry, SearchKind
from records.search_index import CONFIG, FTS_TABLE, TRIGRAM_TABLE
from records.search_text import ParsedQuery
from records.values import exact_text

# The order kinds are listed in (facets, and among hits of equal relevance; then the order they
# were catalogued in).
KIND_ORDER = (
    SearchKind.MODEL,
    SearchKind.DATASET,
    SearchKind.PROTOCOL,
    SearchKind.CONFIGURATION,
    SearchKind.WORK,
    SearchKind.SOURCE,
    SearchKind.DECISION,
    SearchKind.EVALUATION,
    SearchKind.RESULT,
)
# How much more than its text rank a record gains when the query has every word in its name.
NAMED_BONUS = {
    SearchKind.MODEL: 9.0,
    SearchKind.DATASET: 8.0,
    SearchKind.PROTOCOL: 7.0,
    SearchKind.CONFIGURATION: 6.5,
    SearchKind.WORK: 6.0,
    SearchKind.SOURCE: 6.0,
    SearchKind.DECISION: 6.0,
    SearchKind.EVALUATION: 5.0,
    SearchKind.RESULT: 5.0,
}
# Two of the query's words side by side in the record, as in the query ("NT benchmark"): cover
# density's point (words close together), for the price of one phrase match a pair.
ADJACENT_BONUS = 0.25
STABLE_ID_BONUS = 100.0  # the query is the record's stable id
NAME_KEY_BONUS = 20.0  # the query is the record's name or an alias, in any spelling
EXACT_DIGITS_BONUS = 2.0  # a result printed with the digits searched (0.410 for "0.410", before 0.41)
# Column weights, the record's names first: PostgreSQL's {D, C, B, A}; FTS5's in column order.
PG_WEIGHTS = [0.1, 0.2, 0.4, 1.0]
FTS_WEIGHTS = (10.0, 4.0, 2.0, 1.0)
# Near spellings are offered among what has a name a reader might misspell.
NEAR_KINDS = (
    SearchKind.MODEL,
    SearchKind.DATASET,
    SearchKind.PROTOCOL,
    SearchKind.CONFIGURATION,
    SearchKind.WORK,
    SearchKind.SOURCE,
)
NEAR_MIN_SIMILARITY = 0.3  # pg_trgm's own threshold for `%`
HIT_FIELDS = (
    "kind",
    "stable_id",
    "title",
    "url",
    "detail",
    "protocol_title",
    "protocol_url",
    "task_name",
    "task_url",
    "model_name",
    "model_url",
)


Row = dict[str, Any]


class SearchBackend:
    """The entries that match one parsed query. A subclass gives `_matched()`: the SQL of the
    matched entries' (id, kind, score), score being relevance with its bonuses; every
    statement here reads it once (a MATERIALIZED common table expression)."""

    def __init__(self, parsed: ParsedQuery):
        self.parsed = parsed
        self.exact_digits = exact_text(parsed.number) if parsed.number is not None else ""

    def _matched(self) -> tuple[str, list[Any]]:
        raise NotImplementedError

    def counts_and_rows(self, *, kind: str, offset: int, limit: int) -> tuple[dict[str, int], list[Row]]:
        """Every kind's count of matches and one page of entries (of `kind`, "" for all), best
        first, each with `review_state` (an evaluation's or a result's) and `rank`: one statement."""
        rows = self._statement(kind=kind, offset=offset, limit=limit, counts=True)
        counts = {row["kind"]: row["count"] for row in rows if row["part"] == "count"}
        return counts, [row for row in rows if row["part"] == "hit"]

    def rows(self, *, kind: str, offset: int, limit: int) -> list[Row]:
        """One page of entries as `counts_and_rows` gives it, without the counts: one statement."""
        return self._statement(kind=kind, offset=offset, limit=limit, counts=False)

    def near(self, *, limit: int) -> list[Row]:
        """Named records whose title is spelled near the query, nearest first."""
        raise NotImplementedError

    def _statement(self, *, kind: str, offset: int, limit: int, counts: bool) -> list[Row]:
        matched, params = self._matched()
        order = " ".join(f"WHEN '{name}' THEN {i}" for i, name in enumerate(KIND_ORDER))
        where, kind_params = ("WHERE kind = %s", [kind]) if kind else ("", [])
        page = (
            f"SELECT id, score, CASE kind {order} END AS kind_order FROM matched {where} "
            "ORDER BY score DESC, kind_order, id LIMIT %s OFFSET %s"
        )
        columns = ", ".join(f"e.{field}" for field in HIT_FIELDS)
        nothing = ", ".join("NULL" for _ in HIT_FIELDS)
        hits = (
            f"SELECT 'hit' AS part, 0, {columns}, ev.review_state, p.score AS rank, p.kind_order, p.id AS entry_id "
            f"FROM ({page}) p JOIN records_searchentry e ON e.id = p.id "
            "LEFT JOIN records_evaluation ev ON ev.id = e.evaluation_id"
        )
        sql = f"WITH matched(id, kind, score) AS MATERIALIZED ({matched}) SELECT * FROM ("
        if counts:
            # The kind goes in the place of the hit's kind; the other hit columns stay empty.
            count_columns = nothing.replace("NULL", "kind", 1)
            sql += f"SELECT 'count', COUNT(*), {count_columns}, NULL, NULL, NULL, NULL FROM matched GROUP BY kind UNION ALL "
        names = ("part", "count", *HIT_FIELDS, "review_state", "rank", "kind_order", "entry_id")
        position = {name: i for i, name in enumerate(names, start=1)}  # a union's columns are named by its first part
        order = f"{position['part']}, {position['rank']} DESC, {position['kind_order']}, {position['entry_id']}"
        sql += f"{hits}) found ORDER BY {order}"
        with connection.cursor() as cursor:
            cursor.execute(sql, [*params, *kind_params, limit, offset])
            found = cursor.fetchall()
        return [dict(zip(names, row, strict=True)) for row in found]


def search_backend(parsed: ParsedQuery) -> SearchBackend:
    if connection.vendor == "postgresql":
        return PostgresSearch(parsed)
    if connection.vendor == "sqlite":
        return SqliteSearch(parsed)
    raise NotImplementedError(f"no full text search for the {connection.vendor} backend")


class PostgresSearch(SearchBackend):
    def __init__(self, parsed: ParsedQuery):
        super().__init__(parsed)
        self.query = self._tsquery()

    def _tsquery(self) -> SearchQuery | None:
        parts = []
        for segment in self.parsed.segments:
            kind = "phrase" if len(segment.words) > 1 else "plain"
            part = SearchQuery(" ".join(segment.words), config=CONFIG, search_type=kind)
            if segment.key:
                part = part | SearchQuery(segment.key, config=CONFIG, search_type="plain")
            parts.append(part)
        if not parts:
            return None
        query = functools.reduce(operator.and_, parts)
        if self.parsed.whole_key:
            query = query | SearchQuery(self.parsed.whole_key, config=CONFIG, search_type="plain")
        return query

    def _matched(self) -> tuple[str, list[Any]]:
        """The matched entries' (id, kind, score), compiled by the ORM: the tsvector matches
        the tsquery (GIN index), or the stable id or (a number searched) the value is the query's."""
        match = Q(vector=self.query) if self.query is not None else Q(pk__in=[])
        match |= Q(stable_id=self.parsed.text.lower())
        if self.parsed.number is not None:
            match |= Q(number=float(self.parsed.number))
        entries = SearchEntry.objects.filter(match)
        score: Any = Value(0.0)
        if self.query is not None:
            rank: Any = SearchRank(F("vector"), self.query, weights=PG_WEIGHTS, normalization=Value(32))
            for pair in self.parsed.adjacent_pairs:
                together = SearchQuery(pair, config=CONFIG, search_type="phrase")
                rank = rank + Case(When(vector=together, then=Value(ADJACENT_BONUS)), default=Value(0.0))
            by_kind = Case(
                *[When(kind=name, then=Value(bonus)) for name, bonus in NAMED_BONUS.items()], default=Value(0.0)
            )
            named = Case(When(name_vector=self.query, then=by_kind), default=Value(0.0))
            score = rank + named
        score = score + Case(When(stable_id=self.parsed.text.lower(), then=Value(STABLE_ID_BONUS)), default=Value(0.0))
        if self.parsed.key:
            score = score + Case(
                When(name_keys__contains=f" {self.parsed.key} ", then=Value(NAME_KEY_BONUS)), default=Value(0.0)
            )
        if self.exact_digits:
            score = score + Case(
                When(exact_value=self.exact_digits, then=Value(EXACT_DIGITS_BONUS)), default=Value(0.0)
            )
        entries = entries.annotate(score=Func(score, function="", output_field=FloatField()))
        sql, params = entries.values("id", "kind", "score").query.sql_with_params()
        return sql, list(params)

    def near(self, *, limit: int) -> list[Row]:
        key = self.parsed.key
        if len(key) < 3:
            return []
        return list(
            SearchEntry.objects.filter(kind__in=NEAR_KINDS, title_key__trigram_similar=key)
            .annotate(similarity=TrigramSimilarity("title_key", key))
            .filter(similarity__gte=NEAR_MIN_SIMILARITY)
            .order_by("-similarity", "title", "id")
            .values(*HIT_FIELDS)[:limit]
        )


def _phrase(text: str) -> str:
    """An FTS5 string: the tokenizer reads it as a phrase (its words in order); no operator inside."""
    return '"' + text.replace('"', '""') + '"'


class SqliteSearch(SearchBackend):
    def __init__(self, parsed: ParsedQuery):
        super().__init__(parsed)
        self.match = self._fts_query()

    def _fts_query(self) -> str:
        parts = []
        for segment in self.parsed.segments:
            alternatives = [_phrase(" ".join(segment.words))]
            if segment.key:
                alternatives.append(_phrase(segment.key))
            parts.append(f"({' OR '.join(alternatives)})")
        query = " AND ".join(parts)
        if query and self.parsed.whole_key:
            query = f"({query}) OR {_phrase(self.parsed.whole_key)}"
        return query

    def _matched(self) -> tuple[str, list[Any]]:
        """The matched entries' (id, kind, score): FTS5's bm25 (lower is better, scaled to
        [0, 1)) for those matched by text, 0 for those matched only by stable id or value; then the
        bonuses."""
        selects: list[str] = []
        params: list[Any] = []
        if self.match:
            weights = ", ".join(str(weight) for weight in FTS_WEIGHTS)
            selects.append(
                f"SELECT rowid AS id, -bm25({FTS_TABLE}, {weights}) AS rank FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s"
            )
            params.append(self.match)
        other, values = "stable_id = %s", [cast(Any, self.parsed.text.lower())]
        if self.parsed.number is not None:
            other, values = f"({other} OR number = %s)", [*values, float(self.parsed.number)]
        also = f" AND id NOT IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)" if self.match else ""
        selects.append(f"SELECT id, 0.0 AS rank FROM records_searchentry WHERE {other}{also}")
        params.extend([*values, *([self.match] if self.match else [])])
        score = ["(m.rank / (1.0 + m.rank))"]
        for pair in self.parsed.adjacent_pairs:
            score.append(
                f"(CASE WHEN e.id IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s) "
                f"THEN {ADJACENT_BONUS} ELSE 0 END)"
            )
            params.append(_phrase(pair))
        if self.match:
            bonuses = " ".join(f"WHEN '{name}' THEN {bonus}" for name, bonus in NAMED_BONUS.items())
            score.append(
                f"(CASE WHEN e.id IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s) "
                f"THEN (CASE e.kind {bonuses} ELSE 0 END) ELSE 0 END)"
            )
            params.append(f"name_text : ({self.match})")
        score.append(f"(CASE WHEN e.stable_id = %s THEN {STABLE_ID_BONUS} ELSE 0 END)")
        params.append(self.parsed.text.lower())
        if self.parsed.key:
            score.append(f"(CASE WHEN instr(e.name_keys, %s) > 0 THEN {NAME_KEY_BONUS} ELSE 0 END)")
            params.append(f" {self.parsed.key} ")
        if self.exact_digits:
            score.append(f"(CASE WHEN e.exact_value = %s THEN {EXACT_DIGITS_BONUS} ELSE 0 END)")
            params.append(self.exact_digits)
        # MATERIALIZED: bm25() is read where the FTS5 query runs, never inside the outer query's plan.
        sql = (
            f"WITH m(id, rank) AS MATERIALIZED ({' UNION ALL '.join(selects)}) "
            f"SELECT e.id, e.kind, {' + '.join(score)} FROM m JOIN records_searchentry e ON e.id = m.id"
        )
        return sql, params

    def near(self, *, limit: int) -> list[Row]:
        """The named entries sharing the most trigrams with the query (FTS5's trigram tokenizer, bm25),
        kept when their trigram similarity reaches NEAR_MIN_SIMILARITY, as pg_trgm computes it."""
        key = self.parsed.key
        grams = sorted({key[i : i + 3] for i in range(len(key) - 2)})
        if not grams:
            return []
        kinds = ", ".join(f"'{kind}'" for kind in NEAR_KINDS)
        columns = ", ".join(f"e.{field}" for field in HIT_FIELDS)
        sql = (
            f"SELECT {columns}, e.title_key FROM {TRIGRAM_TABLE} t JOIN records_searchentry e ON e.id = t.rowid "
            f"WHERE {TRIGRAM_TABLE} MATCH %s AND e.kind IN ({kinds}) ORDER BY bm25({TRIGRAM_TABLE}) LIMIT 200"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [" OR ".join(_phrase(gram) for gram in grams)])
            rows = cursor.fetchall()
        found = []
        for row in rows:
            entry = dict(zip((*HIT_FIELDS, "title_key"), row, strict=True))
            similarity = trigram_similarity(key, entry.pop("title_key"))
            if similarity >= NEAR_MIN_SIMILARITY:
                found.append((similarity, entry))
        found.sort(key=lambda pair: (-pair[0], pair[1]["title"]))
        return [entry for _similarity, entry in found[:limit]]


def trigram_similarity(a: str, b: str) -> float:
    """pg_trgm's similarity(a, b): the share of trigrams the two have in common, each word padded
    as pg_trgm pads it (two spaces before, one after)."""
    grams = [
        {f"  {word} "[i : i + 3] for word in re.findall(r"[^\W_]+", text.lower()) for i in range(len(word) + 1)}
        for text in (a, b)
    ]
    union = grams[0] | grams[1]
    return len(grams[0] & grams[1]) / len(union) if union else 0.0
