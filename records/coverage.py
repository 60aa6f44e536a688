"""Coverage across all benchmarks: which protocol has which result, in which state, and what is missing.

The one implementation of coverage: the public coverage page (pages.coverage_matrix), its CSV
(pages.coverage_csv) and the release's protocol_coverage table (releases.catalogue_rows, through
`protocol_summaries`) count evaluations and decide whether a baseline role is measured here, by the
same rules:

- every evaluation is counted in the review state it is in, and by who measured it;
- a baseline role is measured when it is active (not retired) and a source-checked evaluation of
  its protocol measures its configuration (`baseline_roles`): a retired role no longer stands for
  the protocol's baseline, as the protocol page's "N of M active baseline roles" says;
- whether a protocol has a reviewed recipe is the benchmarks app's to say, above records: the
  caller reads it there (benchmarks.selectors.reviewed_recipe_protocols) and passes the protocols
  that have one (`with_recipe`).

The page and the CSV choose protocols by the same filters (`Filters`: an area, a context, a dataset
suite), refused with `common.errors.Invalid` when a value names nothing in the catalogue.
"""

from __future__ import annotations

import typing
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from django.db.models import BooleanField, Case, Count, Exists, OuterRef, Q, QuerySet, Value, When

from common.errors import Invalid
from records.models import (
    Area,
    BaselineKind,
    BaselineRole,
    BaselineStatus,
    Context,
    Dataset,
    Evaluation,
    Protocol,
    Result,
)
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

# ------------------------------------------------------------------- rules


class Measured(TypedDict):
    measured: bool  # the annotation baseline_roles() adds


def baseline_roles() -> QuerySet[WithAnnotations[BaselineRole, Measured]]:
    """Baseline roles with `measured`: the role is active (not retired) and a source-checked evaluation of
    its protocol measures its configuration. The one rule of baseline coverage (pages, CSV, release)."""
    measured_here = Evaluation.objects.filter(
        protocol_id=OuterRef("protocol_id"),
        configuration_id=OuterRef("configuration_id"),
        review_state=ReviewState.SOURCE_CHECKED,
    )
    return BaselineRole.objects.order_by().annotate(
        measured=Case(
            When(status=BaselineStatus.RETIRED, then=Value(False)),
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
        Evaluation.objects.filter(protocol_id__in=list(protocol_pks))
        .order_by()
        .values_list("protocol_id", "configuration_id", "review_state", "measured_by")
        .annotate(n=Count("id"))
    )
    return [EvaluationGroup(*row) for row in rows]


@dataclass(frozen=True)
class StateGroup:
    """The evaluations of one protocol in one review state, measured by one party."""

    protocol_id: int
    review_state: str
    measured_by: str
    count: int


def state_groups(protocol_pks: Collection[int]) -> list[StateGroup]:
    """The protocols' evaluations counted by review state and who measured them (one query): what a
    summary counts, in a few groups a protocol however many configurations it tests."""
    rows = (
        Evaluation.objects.filter(protocol_id__in=list(protocol_pks))
        .order_by()
        .values_list("protocol_id", "review_state", "measured_by")
        .annotate(n=Count("id"))
    )
    return [StateGroup(*row) for row in rows]


class Counted(typing.Protocol):
    """What a protocol's summary counts: an EvaluationGroup, a StateGroup, or a CSV's group (with names)."""

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
        Result.objects.filter(evaluation__protocol_id__in=list(protocol_pks))
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
        if not self.measured(BaselineKind.NULL_CONTROL):
            gaps.append("null control not measured")
        if not self.measured(BaselineKind.CONVENTIONAL_REFERENCE):
            gaps.append("conventional reference not measured")
        if not self.has_reviewed_recipe:
            gaps.append("no reviewed recipe")
        return gaps


def protocol_summaries(
    protocols: Mapping[int, str], groups: Iterable[Counted], *, with_recipe: Collection[str]
) -> dict[int, ProtocolSummary]:
    """The summaries of `protocols` (pk -> stable id), from their `evaluation_groups` (or groups of
    the same counts with more fields) and `with_recipe`, the stable ids of those with a reviewed
    recipe (benchmarks.selectors.reviewed_recipe_protocols): one query (their baseline roles)."""
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
    has_tasks = Exists(Dataset.objects.filter(suite_id=OuterRef("pk")))
    return FilterChoices(
        areas=[Choice(*row) for row in Area.objects.order_by("label", "stable_id").values_list("stable_id", "label")],
        contexts=[
            Choice(*row) for row in Context.objects.order_by("label", "stable_id").values_list("stable_id", "label")
        ],
        suites=[
            Choice(*row)
            for row in Dataset.objects.filter(has_tasks).order_by("name", "stable_id").values_list("stable_id", "name")
        ],
    )


def protocols_chosen(filters: Filters) -> QuerySet[Protocol]:
    """The protocols the filters choose, unordered (each filter an EXISTS: no join multiplies rows)."""
    protocols = Protocol.objects.order_by()
    if filters.area:
        areas = Protocol.areas.through.objects.filter(protocol_id=OuterRef("pk"), area__stable_id=filters.area)
        protocols = protocols.filter(Exists(areas))
    if filters.context:
        contexts = Protocol.contexts.through.objects.filter(
            protocol_id=OuterRef("pk"), context__stable_id=filters.context
        )
        protocols = protocols.filter(Exists(contexts))
    if filters.suite:
        in_suite = Q(dataset__stable_id=filters.suite) | Q(dataset__suite__stable_id=filters.suite)
        datasets = Protocol.datasets.through.objects.filter(in_suite, protocol_id=OuterRef("pk"))
        protocols = protocols.filter(Exists(datasets))
    return protocols
