"""The coverage page's CSV: the coverage rule's counts and gaps (records.coverage) for the protocols
the reader's filters choose, each with whether the benchmarks app has a reviewed recipe for it
(benchmarks.selectors.reviewed_recipe_protocols)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Count

from benchmarks.selectors import reviewed_recipe_protocols
from records import coverage as rules
from records.models import BaselineKind, Evaluation, MeasuredBy
from reviews.models import ReviewState

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


def coverage_csv(*, filters: rules.Filters) -> Iterator[dict[str, object]]:
    """The CSV's rows for the protocols the filters choose, by title: one per protocol and tested
    configuration that has evaluations of it (the page's cells, by configuration rather than model),
    then one for each protocol with none (its configuration blank, its state "none"); every row
    carries its protocol's counts and gaps. Refuses unknown filters (Invalid) before the first row.

    Never the matrix's empty cells: its size follows the evaluations, not protocols x configurations.
    Read in chunks of CSV_CHUNK protocols (four queries each: evaluations, baseline roles, recipes)."""
    refused = rules.filter_choices().refusal(filters)
    if refused is not None:
        raise refused
    chosen = rules.protocols_chosen(filters).order_by("title", "stable_id")
    return _csv_rows(list(chosen.values_list("pk", "stable_id", "title")))


def _csv_rows(protocols: list[tuple[int, str, str]]) -> Iterator[dict[str, object]]:
    for start in range(0, len(protocols), CSV_CHUNK):
        chunk = protocols[start : start + CSV_CHUNK]
        groups = [
            _Group(*row)
            for row in Evaluation.objects.filter(protocol_id__in=[pk for pk, _, _ in chunk])
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
        stable_ids = {pk: stable_id for pk, stable_id, _ in chunk}
        with_recipe = reviewed_recipe_protocols(list(stable_ids.values()))
        summaries = rules.protocol_summaries(stable_ids, groups, with_recipe=with_recipe)
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
                "null_control_measured": summary.measured(BaselineKind.NULL_CONTROL),
                "conventional_reference_measured": summary.measured(BaselineKind.CONVENTIONAL_REFERENCE),
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
                    "result_state": rules.best_state(counts),
                    "result_states": rules.states_text(counts),
                    "measured_here": any(part.measured_by == MeasuredBy.PORTAL for part in parts),
                }
