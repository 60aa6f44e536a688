"""Search across records: PostgreSQL full text search (ranked) there, a simple scored match on SQLite."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection
from django.db.models import Case, FloatField, Q, Value, When
from django.db.models.functions import Cast
from django.urls import reverse

from records import models as m
from records.values import ValueInvalid, exact_text, parse_exact

MAX_QUERY_LENGTH = 200
PER_TYPE = 100


@dataclass(frozen=True)
class SearchType:
    name: str
    label: str
    model: type
    title_field: str
    other_fields: tuple[str, ...]
    url_name: str


TYPES = (
    SearchType(
        "protocol", "Protocols", m.Protocol, "title", ("summary", "metric_name", "procedure"), "records:protocol"
    ),
    SearchType(
        "evaluation",
        "Evaluations",
        m.Evaluation,
        "title",
        ("setup", "configuration__name", "dataset__name"),
        "records:evaluation",
    ),
    SearchType(
        "configuration",
        "Configurations",
        m.Configuration,
        "name",
        ("short_name", "family", "method"),
        "records:configuration",
    ),
    SearchType("dataset", "Datasets", m.Dataset, "name", ("task_key", "description"), "records:dataset"),
    SearchType(
        "source", "Sources", m.Source, "title", ("venue", "citation", "authors_short", "doi", "pmcid"), "records:source"
    ),
    SearchType("decision", "Decisions", m.Decision, "title", ("description",), "records:decision"),
)
RESULTS = SearchType(
    "result",
    "Results",
    m.Result,
    "printed_value",
    ("evaluation__title", "evaluation__configuration__name", "evaluation__dataset__name"),
    "records:evaluation",
)
TYPE_BY_NAME = {t.name: t for t in (*TYPES, RESULTS)}


@dataclass
class Hit:
    type: str
    type_label: str
    title: str
    stable_id: str
    url: str
    rank: float
    # For a result: its value with the printed digits and unit, its task and its review state.
    detail: str = ""


@dataclass
class SearchResults:
    query: str
    hits: list[Hit]
    facets: list[tuple[str, str, int]]  # (type, label, count)
    chosen_type: str


def search(*, query: str, record_type: str = "") -> SearchResults:
    query = " ".join(query.split())[:MAX_QUERY_LENGTH]
    chosen = record_type if record_type in TYPE_BY_NAME else ""
    if not query:
        return SearchResults(query="", hits=[], facets=[], chosen_type=chosen)
    per_type = {t.name: _search_type(t, query) for t in TYPES}
    per_type[RESULTS.name] = _search_results(query)
    facets = [(t.name, t.label, len(per_type[t.name])) for t in (*TYPES, RESULTS) if per_type[t.name]]
    hits = [hit for name, found in per_type.items() if not chosen or name == chosen for hit in found]
    hits.sort(key=lambda hit: (-hit.rank, hit.title.lower()))
    return SearchResults(query=query, hits=hits, facets=facets, chosen_type=chosen)


def _search_type(kind: SearchType, query: str) -> list[Hit]:
    exact_id = Case(When(stable_id__iexact=query, then=Value(10.0)), default=Value(0.0), output_field=FloatField())
    if connection.vendor == "postgresql":
        vector = SearchVector(kind.title_field, weight="A", config="english") + SearchVector(
            "stable_id", *kind.other_fields, weight="B", config="english"
        )
        text = SearchQuery(query, search_type="websearch", config="english")
        rows = (
            kind.model.objects.annotate(rank=SearchRank(vector, text) + exact_id)
            .filter(Q(rank__gt=0) | Q(stable_id__iexact=query))
            .order_by("-rank")
            .values("stable_id", kind.title_field, "rank")[:PER_TYPE]
        )
        return [_hit(kind, row["stable_id"], row[kind.title_field], row["rank"]) for row in rows]
    return _fallback(kind, query, exact_id)


def _fallback(kind: SearchType, query: str, exact_id) -> list[Hit]:
    """Every term must appear in some field; a term in the title counts more, an exact stable id most."""
    terms = query.lower().split()
    fields = (kind.title_field, "stable_id", *kind.other_fields)
    condition = Q()
    for term in terms:
        condition &= Q(*[Q(**{f"{name}__icontains": term}) for name in fields], _connector=Q.OR)
    rows = (
        kind.model.objects.filter(condition | Q(stable_id__iexact=query))
        .annotate(exact=exact_id)
        .values("stable_id", kind.title_field, "exact", *kind.other_fields)[: PER_TYPE * 5]
    )
    hits = []
    for row in rows:
        title = (row[kind.title_field] or "").lower()
        rank = row["exact"] + sum(1.0 if term in title else 0.3 for term in terms) / max(len(terms), 1)
        hits.append(_hit(kind, row["stable_id"], row[kind.title_field], rank))
    hits.sort(key=lambda hit: -hit.rank)
    return hits[:PER_TYPE]


def _hit(kind: SearchType, stable_id: str, title: str, rank: float) -> Hit:
    return Hit(
        type=kind.name,
        type_label=kind.label[:-1],
        title=title,
        stable_id=stable_id,
        url=reverse(kind.url_name, args=[stable_id]),
        rank=float(rank),
    )


def _search_results(query: str) -> list[Hit]:
    """Result rows: a number finds the results with that value (0.41 finds 0.410; 300E9 finds a
    printed "300B"); words find results by their evaluation, configuration, task or printed text
    ("300B" too). A hit shows the value with its printed digits, the unit, the task and the state."""
    try:
        number = parse_exact(query)
    except ValueInvalid:
        number = None
    if number is not None:
        condition = Q(value=exact_text(number)) | Q(value_number=float(number))
    else:
        condition = Q()
        for term in query.lower().split():
            condition &= Q(
                *[Q(**{f"{name}__icontains": term}) for name in (RESULTS.title_field, *RESULTS.other_fields)],
                _connector=Q.OR,
            )
    rows = (
        m.Result.objects.annotate(value_number=Cast("value", FloatField()))
        .filter(condition)
        .select_related("evaluation", "evaluation__dataset", "evaluation__configuration")
        .order_by("evaluation__title", "stable_id")[:PER_TYPE]
    )
    hits = []
    for result in rows:
        evaluation = result.evaluation
        state = evaluation.get_review_state_display().lower()
        hits.append(
            Hit(
                type=RESULTS.name,
                type_label="Result",
                title=evaluation.title,
                stable_id=result.stable_id,
                url=f"{evaluation.get_absolute_url()}#result-{result.stable_id}",
                rank=2.0 if number is not None and result.value.as_tuple() == number.as_tuple() else 1.0,
                detail=f"{result.display_value} {result.unit} (printed {result.printed_value}) · {evaluation.dataset.name} · {state}",
            )
        )
    return hits
