"""Coverage across all benchmarks: which protocol has which result, in which state, and what is missing."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from django.db.models import Prefetch

from records import models as m
from reviews.models import ReviewState

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
        return ", ".join(f"{self.states.count(state)} {STATE_WORDS[state]}" for state in STATE_ORDER if state in self.states)


@dataclass
class ProtocolLine:
    protocol: m.Protocol
    cells: list[Cell]
    counts: dict[str, int]
    null_control_measured: bool
    conventional_reference_measured: bool
    has_reviewed_recipe: bool

    @property
    def missing(self) -> list[str]:
        gaps = []
        if not self.counts.get(ReviewState.SOURCE_CHECKED):
            gaps.append("no source-checked result")
        if not self.null_control_measured:
            gaps.append("null control not measured")
        if not self.conventional_reference_measured:
            gaps.append("conventional reference not measured")
        if not self.has_reviewed_recipe:
            gaps.append("no reviewed recipe")
        return gaps


@dataclass
class Coverage:
    configurations: list[m.Configuration]
    lines: list[ProtocolLine]
    areas: list[m.Area]
    contexts: list[m.Context]


def coverage(*, area: str = "", context: str = "", reviewed_recipes: RecipeLookup = no_reviewed_recipes) -> Coverage:
    protocols = m.Protocol.objects.prefetch_related(
        "areas", "contexts", Prefetch("baseline_roles", queryset=m.BaselineRole.objects.all())
    ).order_by("title")
    if area:
        protocols = protocols.filter(areas__stable_id=area)
    if context:
        protocols = protocols.filter(contexts__stable_id=context)
    protocols = list(protocols.distinct())
    evaluations = list(
        m.Evaluation.objects.filter(protocol__in=protocols).values_list("protocol_id", "configuration_id", "review_state", "measured_by")
    )
    configuration_ids = sorted({row[1] for row in evaluations})
    configurations = list(m.Configuration.objects.filter(pk__in=configuration_ids).order_by("name"))
    column = {configuration.pk: index for index, configuration in enumerate(configurations)}
    recipes = reviewed_recipes([p.stable_id for p in protocols])
    lines = []
    for protocol in protocols:
        cells = [Cell() for _ in configurations]
        counts: dict[str, int] = {}
        checked: set[int] = set()
        for protocol_id, configuration_id, state, measured_by in evaluations:
            if protocol_id != protocol.pk:
                continue
            cell = cells[column[configuration_id]]
            cell.states.append(state)
            cell.measured_here |= measured_by == m.MeasuredBy.PORTAL
            counts[state] = counts.get(state, 0) + 1
            if state == ReviewState.SOURCE_CHECKED:
                checked.add(configuration_id)
        roles = {role.kind: role for role in protocol.baseline_roles.all() if role.is_active}

        def measured(kind: str) -> bool:
            role = roles.get(kind)
            return role is not None and role.configuration_id in checked

        lines.append(
            ProtocolLine(
                protocol=protocol, cells=cells, counts=counts,
                null_control_measured=measured(m.BaselineKind.NULL_CONTROL),
                conventional_reference_measured=measured(m.BaselineKind.CONVENTIONAL_REFERENCE),
                has_reviewed_recipe=protocol.stable_id in recipes,
            )
        )
    return Coverage(
        configurations=configurations, lines=lines,
        areas=list(m.Area.objects.order_by("stable_id")), contexts=list(m.Context.objects.order_by("stable_id")),
    )


CSV_COLUMNS = (
    "protocol_id", "protocol_title", "configuration_id", "configuration_name", "result_state", "result_states", "measured_here",
    "source_checked", "excluded", "proposed", "null_control_measured", "conventional_reference_measured",
    "has_reviewed_recipe", "missing",
)


def coverage_rows(report: Coverage):
    """One row per protocol and configuration (the matrix in long form), with the protocol's gaps."""
    for line in report.lines:
        summary = {
            "protocol_id": line.protocol.stable_id, "protocol_title": line.protocol.title,
            "source_checked": line.counts.get(ReviewState.SOURCE_CHECKED, 0),
            "excluded": line.counts.get(ReviewState.EXCLUDED, 0) + line.counts.get(ReviewState.EXCLUDED_RECHECK, 0),
            "proposed": line.counts.get(ReviewState.PROPOSED, 0),
            "null_control_measured": line.null_control_measured,
            "conventional_reference_measured": line.conventional_reference_measured,
            "has_reviewed_recipe": line.has_reviewed_recipe, "missing": "; ".join(line.missing),
        }
        for configuration, cell in zip(report.configurations, line.cells):
            yield {
                **summary, "configuration_id": configuration.stable_id, "configuration_name": configuration.name,
                "result_state": cell.best_state or "none", "result_states": cell.summary, "measured_here": cell.measured_here,
            }
        if not report.configurations:
            yield {**summary, "configuration_id": "", "configuration_name": "", "result_state": "none", "result_states": "", "measured_here": False}
