"""Coverage across all benchmarks: which protocol has which result, in which state, and what is missing.

The one implementation of coverage: the public coverage page (records.coverage_matrix), its CSV
(`coverage_csv`) and the release's protocol_coverage table (releases.exporter, through
`protocol_summaries`) count evaluations and decide whether a baseline role is measured here, by the
same rules:

- every evaluation is counted in the review state it is in, and by who measured it;
- a baseline role is measured when it is active (not retired) and a source-checked evaluation of
  its protocol measures its configuration (`baseline_roles`): a retired role no longer stands for
  the protocol's baseline, as the protocol page's "N of M active baseline roles" says;
- whether a protocol has a reviewed recipe is asked of the benchmarks app, above records: the
  caller passes its lookup (`reviewed_recipes`).

The page and the CSV choose protocols by the same filters (`Filters`: an area, a context, a dataset
suite), refused with `common.errors.Invalid` when a value names nothing in the catalogue.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypedDict

from django.db.models import BooleanField, Case, Count, Exists, OuterRef, Q, QuerySet, Value, When

from common.errors import Invalid
from records import models as m
from reviews.models import ReviewState

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

STATE_ORDER = (ReviewState.SOURCE_CHECKED, ReviewState.EXCLUDED, ReviewState.EXCLUDED_RECHECK, ReviewState.PROPOSED)
# How a cell counts its evaluations, in this order ("2 checked, 1 excluded").
STATE_WORDS = {
    ReviewState.SOURCE_CHECKED: "checked",
    ReviewState.EXCLUDED: "excluded",
    ReviewState.EXCLUDED_RECHECK: "excluded, re-check pending",
    ReviewState.PROPOSED: "proposed",
}

# Of some protocols' stable ids, those with a reviewed benchmark recipe. Recipes belong to the
# benchmarks app, above records: its callers pass benchmarks.selectors.reviewed_recipe_protocols.
RecipeLookup = Callable[[Collection[str]], set[str]]


def no_reviewed_recipes(protocol_stable_ids: Collection[str]) -> set[str]:
    return set()


# ------------------------------------------------------------------- rules


class Measured(TypedDict):
    measured: bool  # the annotation baseline_roles() adds


def baseline_roles() -> QuerySet[WithAnnotations[m.BaselineRole, Measured]]:
    """Baseline roles with `measured`: the role is active (not retired) and a source-checked evaluation of
    its protocol measures its configuration. The one rule of baseline coverage (pages, CSV, release)."""
    measured_here = m.Evaluation.objects.filter(
        protocol_id=OuterRef("protocol_id"),
        configuration_id=OuterRef("configuration_id"),
        review_state=ReviewState.SOURCE_CHECKED,
    )
    return m.BaselineRole.objects.order_by().annotate(
        measured=Case(
            When(status=m.BaselineStatus.RETIRED, then=Value(False)),
            default=Exists(measured_here),
            output_field=BooleanField(),
        )
    )


@dataclass(frozen=True)
class EvaluationGroup:
    """The evaluations of one protocol and configuration in one review state, measured by one party."""

    protocol_id: int
    configuration_id: int
    review_state: str
    measured_by: str
    count: int


def evaluation_groups(protocol_pks: Collection[int]) -> list[EvaluationGroup]:
    """The protocols' evaluations, counted by configuration, review state and who measured them (one query)."""
    rows = (
        m.Evaluation.objects.filter(protocol_id__in=list(protocol_pks))
        .order_by()
        .values_list("protocol_id", "configuration_id", "review_state", "measured_by")
        .annotate(n=Count("id"))
    )
    return [EvaluationGroup(*row) for row in rows]


class Counted(Protocol):
    """What a protocol's summary counts: an EvaluationGroup, or a CSV's group (with names)."""

    @property
    def protocol_id(self) -> int: ...
    @property
    def review_state(self) -> str: ...
    @property
    def measured_by(self) -> str: ...
    @property
    def count(self) -> int: ...


def result_counts(protocol_pks: Collection[int]) -> dict[int, int]:
    """Result rows of each protocol's evaluations (one query; protocols without any are absent)."""
    return dict(
        m.Result.objects.filter(evaluation__protocol_id__in=list(protocol_pks))
        .order_by()
        .values("evaluation__protocol_id")
        .annotate(n=Count("id"))
        .values_list("evaluation__protocol_id", "n")
    )


@dataclass(frozen=True)
class RoleCoverage:
    stable_id: str
    status: str
    configuration_id: str | None  # the stable id of the configuration that fills the role, once selected
    measured: bool


@dataclass
class ProtocolSummary:
    """What coverage says of one protocol: its evaluations counted, its baseline roles, its recipe."""

    evaluations: int = 0
    by_state: dict[str, int] = field(default_factory=dict)
    by_party: dict[str, int] = field(default_factory=dict)
    roles: dict[str, RoleCoverage] = field(default_factory=dict)  # by kind
    has_reviewed_recipe: bool = False

    def count(self, group: Counted) -> None:
        self.evaluations += group.count
        self.by_state[group.review_state] = self.by_state.get(group.review_state, 0) + group.count
        self.by_party[group.measured_by] = self.by_party.get(group.measured_by, 0) + group.count

    def measured(self, kind: str) -> bool:
        role = self.roles.get(kind)
        return role is not None and role.measured

    @property
    def missing(self) -> list[str]:
        gaps = []
        if not self.by_state.get(ReviewState.SOURCE_CHECKED):
            gaps.append("no source-checked result")
        if not self.measured(m.BaselineKind.NULL_CONTROL):
            gaps.append("null control not measured")
        if not self.measured(m.BaselineKind.CONVENTIONAL_REFERENCE):
            gaps.append("conventional reference not measured")
        if not self.has_reviewed_recipe:
            gaps.append("no reviewed recipe")
        return gaps


def protocol_summaries(
    protocols: Mapping[int, str], groups: Iterable[Counted], *, reviewed_recipes: RecipeLookup
) -> dict[int, ProtocolSummary]:
    """The summaries of `protocols` (pk -> stable id), from their `evaluation_groups` (or groups of
    the same counts with more fields): two queries (their baseline roles, and the caller's recipe
    lookup)."""
    summaries = {pk: ProtocolSummary() for pk in protocols}
    for group in groups:
        summaries[group.protocol_id].count(group)
    roles = (
        baseline_roles()
        .filter(protocol_id__in=list(protocols))
        .values_list("protocol_id", "kind", "stable_id", "status", "configuration__stable_id", "measured")
    )
    for protocol_id, kind, stable_id, status, configuration_id, measured in roles:
        summaries[protocol_id].roles[kind] = RoleCoverage(stable_id, status, configuration_id, measured)
    with_recipe = reviewed_recipes(list(protocols.values())) if protocols else set()
    for pk, stable_id in protocols.items():
        summaries[pk].has_reviewed_recipe = stable_id in with_recipe
    return summaries


def best_state(counts: Mapping[str, int]) -> str:
    """The best review state among counted evaluations (a cell's mark and colour); "" for none."""
    return next((state for state in STATE_ORDER if counts.get(state)), "")


def states_text(counts: Mapping[str, int]) -> str:
    """Every state counted, best first: "2 checked, 1 excluded" (never just the best one)."""
    return ", ".join(f"{counts[state]} {STATE_WORDS[state]}" for state in STATE_ORDER if counts.get(state))


# ----------------------------------------------------------------- filters

FILTERS = ("area", "context", "suite")


@dataclass(frozen=True)
class Filters:
    """The reader's choice of protocols by stable id ("" for all): an area, a context, and a dataset
    suite (a protocol is in a suite when one of its datasets is the suite or one of its tasks)."""

    area: str = ""
    context: str = ""
    suite: str = ""

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Filters:
        """From a query string; a value is at most a stable id's length (longer names nothing)."""
        return cls(*(str(params.get(name) or "")[:151].strip() for name in FILTERS))

    @property
    def chosen(self) -> list[tuple[str, str]]:
        """The filters set, in a fixed order: the query string of links that keep them."""
        return [
            (name, value) for name, value in zip(FILTERS, (self.area, self.context, self.suite), strict=True) if value
        ]


@dataclass(frozen=True)
class Choice:
    stable_id: str
    label: str


@dataclass(frozen=True)
class FilterChoices:
    areas: list[Choice]
    contexts: list[Choice]
    suites: list[Choice]  # datasets that have tasks

    def refusal(self, filters: Filters) -> Invalid | None:
        """The error naming a filter whose value names no area, context or suite; None when all do."""
        for name, value in filters.chosen:
            known = {choice.stable_id for choice in getattr(self, f"{name}s")}
            if value not in known:
                return Invalid(f"No {name} has the id “{value}”: choose one of the list, or all.", field=name)
        return None


def filter_choices() -> FilterChoices:
    """The areas, contexts and suites a reader may choose (three queries)."""
    has_tasks = Exists(m.Dataset.objects.filter(suite_id=OuterRef("pk")))
    return FilterChoices(
        areas=[Choice(*row) for row in m.Area.objects.order_by("label", "stable_id").values_list("stable_id", "label")],
        contexts=[
            Choice(*row) for row in m.Context.objects.order_by("label", "stable_id").values_list("stable_id", "label")
        ],
        suites=[
            Choice(*row)
            for row in m.Dataset.objects.filter(has_tasks)
            .order_by("name", "stable_id")
            .values_list("stable_id", "name")
        ],
    )


def protocols_chosen(filters: Filters) -> QuerySet[m.Protocol]:
    """The protocols the filters choose, unordered (each filter an EXISTS: no join multiplies rows)."""
    protocols = m.Protocol.objects.order_by()
    if filters.area:
        areas = m.Protocol.areas.through.objects.filter(protocol_id=OuterRef("pk"), area__stable_id=filters.area)
        protocols = protocols.filter(Exists(areas))
    if filters.context:
        contexts = m.Protocol.contexts.through.objects.filter(
            protocol_id=OuterRef("pk"), context__stable_id=filters.context
        )
        protocols = protocols.filter(Exists(contexts))
    if filters.suite:
        in_suite = Q(dataset__stable_id=filters.suite) | Q(dataset__suite__stable_id=filters.suite)
        datasets = m.Protocol.datasets.through.objects.filter(in_suite, protocol_id=OuterRef("pk"))
        protocols = protocols.filter(Exists(datasets))
    return protocols


# --------------------------------------------------------------------- CSV

CSV_COLUMNS = (
    "protocol_id",
    "protocol_title",
    "configuration_id",
    "configuration_name",
    "model_id",
    "model_name",
    "result_state",
    "result_states",
    "measured_here",
    "source_checked",
    "excluded",
    "proposed",
    "null_control_measured",
    "conventional_reference_measured",
    "has_reviewed_recipe",
    "missing",
)
# Protocols read at once by the CSV: each chunk is three finished queries (no cursor stays open while
# the response streams) and holds at most its protocols' (configuration, state, party) groups.
CSV_CHUNK = 100


# The configuration part of the one row of a protocol with no evaluation.
_NOTHING_RECORDED = {
    "configuration_id": "",
    "configuration_name": "",
    "model_id": "",
    "model_name": "",
    "result_state": "none",
    "result_states": "",
    "measured_here": False,
}


@dataclass(frozen=True)
class _Group:
    protocol_id: int
    configuration_id: str
    configuration_name: str
    model_id: str | None
    model_name: str | None
    review_state: str
    measured_by: str
    count: int


def coverage_csv(*, filters: Filters, reviewed_recipes: RecipeLookup) -> Iterator[dict[str, object]]:
    """The CSV's rows for the protocols the filters choose, by title: one per protocol and tested
    configuration that has evaluations of it (the page's cells, by configuration rather than model),
    then one for each protocol with none (its configuration blank, its state "none"); every row
    carries its protocol's counts and gaps. Refuses unknown filters (Invalid) before the first row.

    Never the matrix's empty cells: its size follows the evaluations, not protocols x configurations.
    Read in chunks of CSV_CHUNK protocols (four queries each, the caller's recipe lookup included)."""
    refused = filter_choices().refusal(filters)
    if refused is not None:
        raise refused
    protocols = list(protocols_chosen(filters).order_by("title", "stable_id").values_list("pk", "stable_id", "title"))
    return _csv_rows(protocols, reviewed_recipes=reviewed_recipes)


def _csv_rows(protocols: list[tuple[int, str, str]], *, reviewed_recipes: RecipeLookup) -> Iterator[dict[str, object]]:
    for start in range(0, len(protocols), CSV_CHUNK):
        chunk = protocols[start : start + CSV_CHUNK]
        groups = [
            _Group(*row)
            for row in m.Evaluation.objects.filter(protocol_id__in=[pk for pk, _, _ in chunk])
            .order_by()
            .values_list(
                "protocol_id",
                "configuration__stable_id",
                "configuration__name",
                "configuration__model__stable_id",
                "configuration__model__name",
                "review_state",
                "measured_by",
            )
            .annotate(n=Count("id"))
        ]
        summaries = protocol_summaries(
            {pk: stable_id for pk, stable_id, _ in chunk}, groups, reviewed_recipes=reviewed_recipes
        )
        cells: dict[int, dict[str, list[_Group]]] = {}
        for group in groups:
            cells.setdefault(group.protocol_id, {}).setdefault(group.configuration_id, []).append(group)
        for pk, stable_id, title in chunk:
            summary = summaries[pk]
            shared = {
                "protocol_id": stable_id,
                "protocol_title": title,
                "source_checked": summary.by_state.get(ReviewState.SOURCE_CHECKED, 0),
                "excluded": summary.by_state.get(ReviewState.EXCLUDED, 0)
                + summary.by_state.get(ReviewState.EXCLUDED_RECHECK, 0),
                "proposed": summary.by_state.get(ReviewState.PROPOSED, 0),
                "null_control_measured": summary.measured(m.BaselineKind.NULL_CONTROL),
                "conventional_reference_measured": summary.measured(m.BaselineKind.CONVENTIONAL_REFERENCE),
                "has_reviewed_recipe": summary.has_reviewed_recipe,
                "missing": "; ".join(summary.missing),
            }
            by_configuration = cells.get(pk, {})
            if not by_configuration:
                yield {**shared, **_NOTHING_RECORDED}
                continue
            for parts in sorted(
                by_configuration.values(), key=lambda g: (g[0].configuration_name, g[0].configuration_id)
            ):
                counts: dict[str, int] = {}
                for part in parts:
                    counts[part.review_state] = counts.get(part.review_state, 0) + part.count
                first = parts[0]
                yield {
                    **shared,
                    "configuration_id": first.configuration_id,
                    "configuration_name": first.configuration_name,
                    "model_id": first.model_id or "",
                    "model_name": first.model_name or "",
                    "result_state": best_state(counts),
                    "result_states": states_text(counts),
                    "measured_here": any(part.measured_by == m.MeasuredBy.PORTAL for part in parts),
                }
