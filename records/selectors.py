"""Read selectors for the public pages: a constant number of SQL statements whatever the row count."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar
from urllib.parse import urlencode

from django.db.models import Count, Model, Prefetch, Q, QuerySet
from django.http import Http404, QueryDict

from records.models import QUOTED_READINGS, Evaluation, GenomicModel, Protocol, Result, Source
from records.page_lists import PAGE_PARAM, TABLE_PARAM, Listed, listed
from records.values import quote_value_problem
from reviews.models import Reviewable
from reviews.selectors import ReviewLog, last_review_entries

_Record = TypeVar("_Record", bound=Model)


PROTOCOLS_PER_PAGE = 25


@dataclass
class Catalogue:
    """The home page: what the catalogue holds, and a page of its protocols by title."""

    counts: dict[str, int]
    protocols: Listed[Protocol]  # each with `evaluation_count`


def catalogue(*, params: QueryDict) -> Catalogue:
    """A constant number of queries: the counts, and the page of protocols with their evaluations counted."""
    counts = {
        "protocols": Protocol.objects.count(),
        "evaluations": Evaluation.objects.count(),
        "models": GenomicModel.objects.filter(merged_into__isnull=True).count(),
        "sources": Source.objects.count(),
    }
    ids = Protocol.objects.order_by("title", "stable_id").values_list("pk", flat=True)
    protocols: Listed[Any] = listed(ids, key="protocols", params=params, per_page=PROTOCOLS_PER_PAGE)
    counted = Protocol.objects.filter(pk__in=protocols.items).annotate(evaluation_count=Count("evaluations"))
    protocols.items = sorted(counted, key=lambda p: (p.title, p.stable_id))
    return Catalogue(counts=counts, protocols=protocols)


def evaluations_queryset(*, with_protocol: bool = True) -> QuerySet[Evaluation]:
    """Evaluations with what their rows show; `with_protocol=False` when they are prefetched from
    their protocol, which Django then sets on each (one instance, not one a row)."""
    related = ("protocol",) if with_protocol else ()
    return Evaluation.objects.select_related(
        *related,
        "configuration__model",
        "dataset",
        "source",
        "concern_source",
        "review_state_changed_by",
        "repeats",
        "repeats__source",
    ).prefetch_related(
        Prefetch("results", queryset=Result.objects.select_related("reference_configuration").order_by("stable_id"))
    )


def record_or_404(queryset: QuerySet[_Record], stable_id: str) -> _Record:
    """The record, a reviewable one with its review log (`review_log`, read only if the page shows it)."""
    record = queryset.filter(stable_id=stable_id).first()
    if record is None:
        raise Http404(f"No {queryset.model._meta.verbose_name} with stable id {stable_id!r}")
    return with_review_log(record)


def with_review_log(record: _Record) -> _Record:
    """Give a reviewable record its page's review log as `record.review_log` (reviews.selectors.ReviewLog:
    one query when the page lists it, none when the page comes from the page cache)."""
    if isinstance(record, Reviewable):
        record.review_log = ReviewLog(record)  # type: ignore[attr-defined]
    return record


def with_last_reviews(records: list[Any]) -> None:
    """Give each of the protocol page's reviewable rows (evidence rows, baseline roles) its last
    transition as `last_review` (None when never reviewed): one query for all of them. Their full logs
    are in the API (`.../events/`); a page with many rows does not list them all."""
    last = last_review_entries(records=records)
    for record in records:
        record.last_review = last.get((record._meta.model_name, record.pk))


# -- facets: the "Filter evaluations" links of a protocol page ------------------------------------


@dataclass(frozen=True)
class FacetSpec:
    param: str
    label: str
    value_of: Callable[[Any], str]
    label_of: Callable[[Any], str]
    # Where the database holds the value and its label, for counting in SQL (`facet_counts_in_sql`):
    # an ORM path each; no label path: the field's choice label, or the value itself.
    column: str = ""
    label_column: str = ""


@dataclass
class FacetOption:
    value: str
    label: str
    count: int
    selected: bool
    query: str  # the query string that selects it (or, when selected, removes it)


@dataclass
class Facet:
    param: str
    label: str
    options: list[FacetOption]  # at most FACET_OPTIONS_SHOWN, by label
    unlisted: int = 0  # options not listed (the least frequent)


@dataclass
class Faceted:
    items: list[Any]
    total: int
    facets: list[Facet]
    applied: list[tuple[str, str, str]]  # (facet label, option label, query string without it)
    clear_query: str


NOT_STATED = "(not stated)"
# A filter's options beyond this many (the most frequent first) are not listed: a protocol of ten
# thousand configurations would list them all. A chosen option is always listed.
FACET_OPTIONS_SHOWN = 12
EVALUATION_FACETS = (
    FacetSpec(
        "configuration",
        "Tested model or method",
        lambda e: e.configuration.stable_id,
        lambda e: e.configuration.name,
        column="configuration__stable_id",
        label_column="configuration__name",
    ),
    FacetSpec(
        "dataset",
        "Dataset",
        lambda e: e.dataset.stable_id,
        lambda e: e.dataset.name,
        column="dataset__stable_id",
        label_column="dataset__name",
    ),
    FacetSpec(
        "setup", "Evaluation setup", lambda e: e.setup or NOT_STATED, lambda e: e.setup or NOT_STATED, column="setup"
    ),
    FacetSpec(
        "measured_by",
        "Measured by",
        lambda e: e.measured_by,
        lambda e: e.get_measured_by_display(),
        column="measured_by",
    ),
    FacetSpec(
        "reading_method",
        "How the value was read",
        lambda e: e.reading_method,
        lambda e: e.get_reading_method_display(),
        column="reading_method",
    ),
    FacetSpec(
        "review_state",
        "Review state",
        lambda e: e.review_state,
        lambda e: e.get_review_state_display(),
        column="review_state",
    ),
)
EVIDENCE_FACETS = (
    FacetSpec("evidence_property", "Property", lambda r: r.property_name, lambda r: r.property_name),
    FacetSpec("evidence_support", "Support", lambda r: r.support, lambda r: r.get_support_display()),
    FacetSpec(
        "evidence_review_state", "Review state", lambda r: r.review_state, lambda r: r.get_review_state_display()
    ),
)


# What quote_plus leaves as it is: most keys and values (parameter names, stable ids) need no encoding.
_UNQUOTED = re.compile(r"[A-Za-z0-9_.~-]*")


def _encode_pair(key: str, value: str) -> str:
    """`key=value` as QueryDict.urlencode writes it."""
    value = str(value)
    if _UNQUOTED.fullmatch(key) and _UNQUOTED.fullmatch(value):
        return f"{key}={value}"
    return urlencode({key.encode(): value.encode()})


def _selected(specs: tuple[FacetSpec, ...], params: QueryDict) -> dict[str, str]:
    return {spec.param: value for spec in specs if (value := params.get(spec.param))}


def facet_selected(specs: tuple[FacetSpec, ...], params: QueryDict) -> bool:
    """Whether `params` chooses an option of any of the facets."""
    return bool(_selected(specs, params))


def _matcher(specs: tuple[FacetSpec, ...], params: QueryDict) -> tuple[bool, Callable[..., bool]]:
    """Whether `params` selects any option, and whether an item matches the selection (less one facet's)."""
    selected = _selected(specs, params)
    chosen = [(spec.param, spec.value_of, selected[spec.param]) for spec in specs if spec.param in selected]

    def matches(item: Any, skip: str | None = None) -> bool:
        return all(value_of(item) == value for param, value_of, value in chosen if param != skip)

    return bool(chosen), matches


def facet_counts(items: list[Any], specs: tuple[FacetSpec, ...], params: QueryDict) -> dict[str, dict[str, list[Any]]]:
    """Each facet's options as value -> [label, count], counted over the other facets' selection."""
    chosen, matches = _matcher(specs, params)
    counts: dict[str, dict[str, list[Any]]] = {}
    for spec in specs:
        options = counts[spec.param] = {}
        for item in [item for item in items if matches(item, skip=spec.param)] if chosen else items:
            value = spec.value_of(item)
            entry = options.get(value)
            if entry is None:  # the label of the option's first item, computed once
                entry = options[value] = [spec.label_of(item), 0]
            entry[1] += 1
    return counts


def facet_counts_in_sql(
    queryset: QuerySet[Any],
    specs: tuple[FacetSpec, ...],
    params: QueryDict,
    *,
    unselected: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], QuerySet[Any]]:
    """`facet_counts` of the queryset's rows counted by the database (one GROUP BY a facet, each spec
    naming its `column`), and the rows matching every selected option: a filtered page reads none of
    the rows it does not list. `unselected`, the counts with nothing selected (a protocol's
    summary's), stands for a facet's where no other facet is selected."""
    selected = _selected(specs, params)

    def matching(skip: str | None = None) -> Q:
        where = Q()
        for spec in specs:
            if spec.param in selected and spec.param != skip:
                value = selected[spec.param]
                where &= Q(**{spec.column: "" if value == NOT_STATED else value})
        return where

    counts: dict[str, Any] = {}
    for spec in specs:
        if unselected is not None and not set(selected) - {spec.param}:
            counts[spec.param] = unselected.get(spec.param, {})
            continue
        field = queryset.model._meta.get_field(spec.column) if "__" not in spec.column else None
        choices = {str(value): str(label) for value, label in field.flatchoices} if field is not None else {}
        rows = (
            queryset.filter(matching(skip=spec.param))
            .order_by()
            .values_list(spec.column, spec.label_column or spec.column)
            .annotate(count=Count("pk"))
        )
        options = counts[spec.param] = {}
        for value, label, count in rows:
            value = value or NOT_STATED
            options[value] = [label if spec.label_column else choices.get(value, value), count]
    return counts, queryset.filter(matching())


def faceted(items: list[Any], specs: tuple[FacetSpec, ...], params: QueryDict) -> Faceted:
    """Filter `items` by the facets selected in `params`; count each option over the other facets' selection.

    Runs in Python over rows the page already loaded, so filtering adds no SQL query.
    """
    _chosen, matches = _matcher(specs, params)
    found = facets_of(facet_counts(items, specs, params), specs, params, total=len(items))
    found.items = [item for item in items if matches(item)]
    return found


def facets_of(counts: dict[str, Any], specs: tuple[FacetSpec, ...], params: QueryDict, *, total: int) -> Faceted:
    """The facets' links from each option's (label, count) per facet (`counts[param][value]`, counted
    over the other facets' selection), for `total` items; `items` is left empty for the caller."""
    selected = _selected(specs, params)
    # Another selection starts at its first page. The pairs are encoded once, as QueryDict.urlencode
    # encodes them (a protocol page makes one query string per option, a thousand and more).
    kept = [(key, values) for key, values in params.lists() if key not in (PAGE_PARAM, TABLE_PARAM)]
    encoded = [(key, [_encode_pair(key, value) for value in values]) for key, values in kept]

    def query_with(**changes: str | None) -> str:
        """The query string of `params` less its page, with `changes` (None: removed) moved last,
        byte for byte what QueryDict's pop, set and urlencode give."""
        parts = [pair for key, pairs in encoded if key not in changes for pair in pairs]
        parts.extend(_encode_pair(key, value) for key, value in changes.items() if value is not None)
        return "&".join(parts)

    facets: list[Facet] = []
    applied: list[tuple[str, str, str]] = []
    for spec in specs:
        param, current = spec.param, selected.get(spec.param)
        options_counted = counts.get(param, {})
        # The most frequent options, and the chosen one, are listed (by label).
        listed = options_counted
        if len(options_counted) > FACET_OPTIONS_SHOWN:
            frequent = sorted(options_counted.items(), key=lambda kv: (-kv[1][1], kv[1][0].lower()))
            listed = dict(frequent[:FACET_OPTIONS_SHOWN])
            if current in options_counted:
                listed[current] = options_counted[current]
        # query_with(param=value) for each option: the other pairs are the same for all of them.
        without = query_with(**{param: None})
        joiner = "&" if without else ""
        options = [
            FacetOption(
                value=value,
                label=label,
                count=count,
                selected=current == value,
                query=without if current == value else f"{without}{joiner}{_encode_pair(param, value)}",
            )
            for value, (label, count) in sorted(listed.items(), key=lambda kv: kv[1][0].lower())
        ]
        facets.append(
            Facet(param=param, label=spec.label, options=options, unlisted=len(options_counted) - len(listed))
        )
        if param in selected:
            label = next((o.label for o in options if o.selected), selected[param])
            applied.append((spec.label, label, without))
    return Faceted(
        items=[],
        total=total,
        facets=facets,
        applied=applied,
        clear_query=query_with(**{spec.param: None for spec in specs}),
    )


def results_contradicting_quotes(*, named: int = 10) -> tuple[int, list[str]]:
    """How many results their evaluation's quote contradicts with no reason recorded, and the first
    `named` of them ("<result>: <why>"): one pass in evaluation order, a chunk of rows in memory."""
    rows = (
        Result.objects.filter(
            quote_mismatch_reason="", evaluation__reading_method__in=QUOTED_READINGS, evaluation__quote__gt=""
        )
        .order_by("evaluation_id", "pk")
        .values_list("stable_id", "value", "evaluation__quote")
    )
    count, names = 0, list[str]()
    for stable_id, value, quote in rows.iterator(chunk_size=2000):
        problem = quote_value_problem(value=Decimal(value), quote=quote)
        if problem:
            count += 1
            if len(names) < named:
                names.append(f"{stable_id}: {problem}")
    return count, names
