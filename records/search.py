"""Search across records: PostgreSQL full text search (ranked) there, a simple scored match on SQLite."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection
from django.db.models import Case, FloatField, Prefetch, Q, Value, When
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
    # Columns a hit shows besides its title (read with it, never a query a hit).
    shown_fields: tuple[str, ...] = ()


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
        shown_fields=("model__stable_id", "model__name"),
    ),
    SearchType(
        "dataset",
        "Datasets",
        m.Dataset,
        "name",
        ("task_key", "description"),
        "records:dataset",
        shown_fields=("task_key", "suite__name"),
    ),
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
# Models are found by their name and by every alias a paper prints for them ("HyenaDNA-1KB"),
# in any spelling of it (records.models.alias_key).
MODELS = SearchType(
    "model", "Models", m.GenomicModel, "name", ("family", "public_id", "aliases__alias"), "records:model"
)
TYPE_BY_NAME = {t.name: t for t in (MODELS, *TYPES, RESULTS)}


@dataclass
class Hit:
    type: str
    type_label: str
    title: str
    stable_id: str
    url: str
    rank: float
    # For a result: its value with the printed digits and unit, its task and its review state; for a
    # model: the names papers print for it; for a task: its key and suite.
    detail: str = ""
    # For a configuration that names a model: the model's page.
    model_url: str = ""
    model_name: str = ""


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
    per_type = {MODELS.name: _search_models(query)}
    per_type.update({t.name: _search_type(t, query) for t in TYPES})
    per_type[RESULTS.name] = _search_results(query)
    facets = [(t.name, t.label, len(per_type[t.name])) for t in (MODELS, *TYPES, RESULTS) if per_type[t.name]]
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
            .values("stable_id", kind.title_field, "rank", *kind.shown_fields)[:PER_TYPE]
        )
        return sorted((_hit(kind, row, row["rank"], query) for row in rows), key=lambda hit: -hit.rank)
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
        .values("stable_id", kind.title_field, "exact", *kind.other_fields, *kind.shown_fields)[: PER_TYPE * 5]
    )
    hits = []
    for row in rows:
        title = (row[kind.title_field] or "").lower()
        rank = row["exact"] + sum(1.0 if term in title else 0.3 for term in terms) / max(len(terms), 1)
        hits.append(_hit(kind, row, rank, query))
    hits.sort(key=lambda hit: -hit.rank)
    return hits[:PER_TYPE]


def _hit(kind: SearchType, row: dict, rank: float, query: str) -> Hit:
    stable_id = row["stable_id"]
    if kind.name == "dataset":
        # A task named by the query ("promoter", "prom_300_all") leads the evaluations that mention it.
        name, terms = (row[kind.title_field] or "").lower(), query.lower().split()
        if all(term in name for term in terms) or (row.get("task_key") or "").lower() == query.lower():
            rank += 0.5
    hit = Hit(
        type=kind.name,
        type_label=kind.label[:-1],
        title=row[kind.title_field],
        stable_id=stable_id,
        url=reverse(kind.url_name, args=[stable_id]),
        rank=float(rank),
    )
    if row.get("model__stable_id"):
        hit.model_url = reverse(MODELS.url_name, args=[row["model__stable_id"]])
        hit.model_name = row["model__name"]
    if row.get("task_key") and row.get("suite__name"):
        hit.type_label = "Task"
        hit.detail = f"task {row['task_key']} of {row['suite__name']}"
    return hit


def _search_models(query: str) -> list[Hit]:
    """Models by name, family, public id, stable id and every alias; an alias or name in the same
    spelling as the query (alias_key: "hyenadna 1kb" is "HyenaDNA-1KB") ranks first. A model merged
    into another is found through that one (its aliases moved with the merge)."""
    terms = query.lower().split()
    key = m.alias_key(query)
    fields = ("name", "stable_id", *MODELS.other_fields)
    condition = Q()
    for term in terms:
        condition &= Q(*[Q(**{f"{name}__icontains": term}) for name in fields], _connector=Q.OR)
    if key:
        condition |= Q(aliases__key=key)
    condition |= Q(stable_id__iexact=query)
    ids = list(
        m.GenomicModel.objects.filter(condition, merged_into__isnull=True)
        .values_list("id", flat=True)
        .distinct()[: PER_TYPE * 5]
    )
    models = m.GenomicModel.objects.filter(id__in=ids).prefetch_related(
        Prefetch("aliases", queryset=m.ModelAlias.objects.order_by("alias"))
    )
    hits = []
    for model in models:
        aliases = list(model.aliases.all())
        title = model.name.lower()
        rank = sum(1.0 if term in title else 0.3 for term in terms) / max(len(terms), 1)
        if all(term in title for term in terms):
            rank += 0.5  # a model named by the query leads the records that mention it
        if model.stable_id.lower() == query.lower():
            rank += 10.0
        elif key and (key == m.alias_key(model.name) or any(alias.key == key for alias in aliases)):
            rank += 5.0
        detail = f"also printed as {', '.join(alias.alias for alias in aliases)}" if aliases else ""
        hits.append(
            Hit(
                type=MODELS.name,
                type_label="Model",
                title=model.name,
                stable_id=model.stable_id,
                url=model.get_absolute_url(),
                rank=rank,
                detail=detail,
            )
        )
    hits.sort(key=lambda hit: (-hit.rank, hit.title.lower()))
    return hits[:PER_TYPE]


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
