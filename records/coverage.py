"""Coverage across all benchmarks: which protocol has which result, in which state, and what is missing.

The one implementation of coverage: the public coverage page and its CSV (`coverage`) and the
release's protocol_coverage table (releases.exporter, through `protocol_summaries`) count
evaluations and decide whether a baseline role is measured here, by the same rules:

- every evaluation is counted in the review state it is in, and by who measured it;
- a baseline role is measured when it is active (not retired) and a source-checked evaluation of
  its protocol measures its configuration (`baseline_roles`): a retired role no longer stands for
  the protocol's baseline, as the protocol page's "N of M active baseline roles" says;
- whether a protocol has a reviewed recipe is asked of the benchmarks app, above records: the
  caller passes its lookup (`reviewed_recipes`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from django.db.models import BooleanField, Case, Count, Exists, OuterRef, QuerySet, Value, When

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

    def count(self, group: EvaluationGroup) -> None:
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
    protocols: Mapping[int, str], groups: Iterable[EvaluationGroup], *, reviewed_recipes: RecipeLookup
) -> dict[int, ProtocolSummary]:
    """The summaries of `protocols` (pk -> stable id), from their `evaluation_groups`: two queries
    (their baseline roles, and the caller's recipe lookup)."""
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


# ------------------------------------------------------------------ the page


@dataclass
class Cell:
    """The results of one configuration under one protocol."""

    states: list[str] = field(default_factory=list)
    measured_here: bool = False

    @property
    def best_state(self) -> str:
        return next((state for state in STATE_ORDER if state in self.states), "")

    @property
    def summary(self) -> str:
        """Every state the cell holds, counted: "2 checked, 1 excluded" (never just the best one)."""
        return ", ".join(
            f"{self.states.count(state)} {STATE_WORDS[state]}" for state in STATE_ORDER if state in self.states
        )


@dataclass
class ProtocolLine:
    protocol: m.Protocol
    cells: list[Cell]
    summary: ProtocolSummary

    @property
    def counts(self) -> dict[str, int]:
        return self.summary.by_state

    @property
    def null_control_measured(self) -> bool:
        return self.summary.measured(m.BaselineKind.NULL_CONTROL)

    @property
    def conventional_reference_measured(self) -> bool:
        return self.summary.measured(m.BaselineKind.CONVENTIONAL_REFERENCE)

    @property
    def has_reviewed_recipe(self) -> bool:
        return self.summary.has_reviewed_recipe

    @property
    def missing(self) -> list[str]:
        return self.summary.missing


@dataclass
class Coverage:
    configurations: list[m.Configuration]
    lines: list[ProtocolLine]
    areas: list[m.Area]
    contexts: list[m.Context]


def coverage(*, area: str = "", context: str = "", reviewed_recipes: RecipeLookup = no_reviewed_recipes) -> Coverage:
    queryset = m.Protocol.objects.prefetch_related("areas", "contexts").order_by("title")
    if area:
        queryset = queryset.filter(areas__stable_id=area)
    if context:
        queryset = queryset.filter(contexts__stable_id=context)
    protocols = list(queryset.distinct())
    groups = evaluation_groups([p.pk for p in protocols])
    configurations = list(
        m.Configuration.objects.filter(pk__in=sorted({g.configuration_id for g in groups})).order_by("name")
    )
    column = {configuration.pk: index for index, configuration in enumerate(configurations)}
    summaries = protocol_summaries({p.pk: p.stable_id for p in protocols}, groups, reviewed_recipes=reviewed_recipes)
    cells = {p.pk: [Cell() for _ in configurations] for p in protocols}
    for group in groups:
        cell = cells[group.protocol_id][column[group.configuration_id]]
        cell.states += [group.review_state] * group.count
        cell.measured_here |= group.measured_by == m.MeasuredBy.PORTAL
    return Coverage(
        configurations=configurations,
        lines=[ProtocolLine(protocol=p, cells=cells[p.pk], summary=summaries[p.pk]) for p in protocols],
        areas=list(m.Area.objects.order_by("stable_id")),
        contexts=list(m.Context.objects.order_by("stable_id")),
    )


CSV_COLUMNS = (
    "protocol_id",
    "protocol_title",
    "configuration_id",
    "configuration_name",
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


def coverage_rows(report: Coverage) -> Iterator[dict[str, object]]:
    """One row per protocol and configuration (the matrix in long form), with the protocol's gaps."""
    for line in report.lines:
        summary = {
            "protocol_id": line.protocol.stable_id,
            "protocol_title": line.protocol.title,
            "source_checked": line.counts.get(ReviewState.SOURCE_CHECKED, 0),
            "excluded": line.counts.get(ReviewState.EXCLUDED, 0) + line.counts.get(ReviewState.EXCLUDED_RECHECK, 0),
            "proposed": line.counts.get(ReviewState.PROPOSED, 0),
            "null_control_measured": line.null_control_measured,
            "conventional_reference_measured": line.conventional_reference_measured,
            "has_reviewed_recipe": line.has_reviewed_recipe,
            "missing": "; ".join(line.missing),
        }
        for configuration, cell in zip(report.configurations, line.cells, strict=True):
            yield {
                **summary,
                "configuration_id": configuration.stable_id,
                "configuration_name": configuration.name,
                "result_state": cell.best_state or "none",
                "result_states": cell.summary,
                "measured_here": cell.measured_here,
            }
        if not report.configurations:
            yield {
                **summary,
                "configuration_id": "",
                "configuration_name": "",
                "result_state": "none",
                "result_states": "",
                "measured_here": False,
            }
