"""A protocol's comparisons in summary: what its page says of all its rows, kept so that a page
reads only the rows it shows.

A protocol page marks the best value of each column, counts, filters and cites over every
evaluation of the protocol, but shows a page of them. The summary holds what those need: the
comparison groups (their best values, best and tied results and counts, for both choices of
including excluded rows), the matrix's configurations in order, the evaluations in table order,
the filters' option counts, the review counts, the cited sources and the charts' sentence. It is
computed by the same code as every comparison (records.compared_rows, records.comparisons) and
stored as JSON in `ProtocolSummary` under the protocol's change number (records.models.summary):
a summary is read only while the number is the current one; otherwise the reader computes it
(one read of the protocol's rows) and stores it for the next reader. A write's own transaction
raises the number (records.summary_triggers), so a reader never reads a summary older than the rows
it shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.http import QueryDict

from records import compared_rows, comparisons
from records.models import Protocol, ProtocolChanges, ProtocolSummary
from records.selectors import EVALUATION_FACETS, facet_counts
from reviews.models import EXCLUDED_STATES, ReviewState

# Raised when what a summary holds changes: a summary of another format is computed again.
FORMAT = 3


@dataclass
class GroupSummary:
    """A comparison group as the page's columns and best marks read it."""

    dataset_id: int
    relation: str
    reference_id: int | None
    compared_count: int
    best_value: Decimal | None
    best: frozenset[int]  # its best results' primary keys
    tied: frozenset[int]  # the results that tie with its best (records.rules.evidence.TIE_RULE)
    best_configurations: list[int]  # the best results' configurations, in the group's order
    # Result -> (how it counts, the stable id and value of the printing compared): the printings
    # of a measurement that another printing of it stands for (records.comparisons.ResultRow).
    counted_with: dict[int, tuple[str, str, str]]

    @property
    def key(self) -> tuple[int, str, int | None]:
        return (self.dataset_id, self.relation, self.reference_id)


@dataclass
class Summary:
    evaluation_ids: list[int]  # in the evaluations table's order (configuration name, stable id)
    result_count: int
    different_count: int
    checked_configurations: frozenset[int]  # configurations with a source-checked evaluation
    source_ids: list[int]  # the sources the evaluations cite, in order of first citation
    configurations: list[int]  # the matrix's rows: every configuration with a result, by name
    # Per filter (selectors.EVALUATION_FACETS): option value -> (label, evaluations), in order of
    # first appearance; the review and measurement counts are read off them.
    facets: dict[str, dict[str, tuple[str, int]]]
    groups: dict[bool, list[GroupSummary]]  # by include_excluded
    charts_sentences: dict[bool, str]

    @property
    def evaluation_count(self) -> int:
        return len(self.evaluation_ids)

    def _count(self, facet: str, *values: str) -> int:
        return sum(self.facets[facet][value][1] for value in values if value in self.facets[facet])

    @property
    def proposed_count(self) -> int:
        return self._count("review_state", ReviewState.PROPOSED)

    @property
    def excluded_count(self) -> int:
        return self._count("review_state", *EXCLUDED_STATES)

    @property
    def configuration_count(self) -> int:
        return len(self.facets["configuration"])

    @property
    def measured_by_counts(self) -> dict[str, int]:
        return {party: count for party, (_label, count) in self.facets["measured_by"].items()}


def _group(group: comparisons.ComparisonGroup) -> dict[str, Any]:
    best = [row for row in group.rows if row.is_best]
    assert group.dataset is not None
    return {
        "dataset": group.dataset.pk,
        "relation": group.relation,
        "reference": group.reference.pk if group.reference is not None else None,
        "compared": group.compared_count,
        "best_value": None if group.best_value is None else str(group.best_value),
        "best": [row.result.pk for row in best],
        "tied": [row.result.pk for row in group.rows if row.tied_with_best],
        "best_configurations": [row.evaluation.configuration_id for row in best],
        "counted_with": {
            str(row.result.pk): [row.disagreement, *row.same_as] for row in group.rows if row.same_as is not None
        },
    }


def summary_compute(*, protocol: Protocol) -> dict[str, Any]:
    """The protocol's summary as stored (JSON), read off every evaluation and result of it."""
    evaluations = compared_rows.compared_evaluations(protocol)
    groups = {
        include: comparisons.compare(protocol=protocol, evaluations=evaluations, include_excluded=include)
        for include in (False, True)
    }
    sources: dict[int, None] = {}
    for evaluation in evaluations:
        for pk in (evaluation.source_id, evaluation.concern_source_id):
            if pk is not None:
                sources.setdefault(pk, None)
    return {
        "format": FORMAT,
        "direction": protocol.metric_direction,
        "evaluations": [evaluation.pk for evaluation in evaluations],
        "results": sum(len(evaluation.results) for evaluation in evaluations),
        "different": sum(1 for e in evaluations if e.different_measurement),
        "checked": sorted({e.configuration_id for e in evaluations if e.review_state == ReviewState.SOURCE_CHECKED}),
        "sources": list(sources),
        "configurations": [c.pk for c in comparisons.matrix_configurations(groups[False])],
        "facets": facet_counts(evaluations, EVALUATION_FACETS, QueryDict()),
        "groups": {str(include): [_group(group) for group in found] for include, found in groups.items()},
        "charts": {
            str(include): comparisons.charts_sentence(found, include_excluded=include) if found else ""
            for include, found in groups.items()
        },
    }


def _summary(data: dict[str, Any]) -> Summary:
    return Summary(
        evaluation_ids=data["evaluations"],
        result_count=data["results"],
        different_count=data["different"],
        checked_configurations=frozenset(data["checked"]),
        source_ids=data["sources"],
        configurations=data["configurations"],
        facets={
            param: {value: (label, count) for value, (label, count) in options.items()}
            for param, options in data["facets"].items()
        },
        groups={
            include == "True": [
                GroupSummary(
                    dataset_id=group["dataset"],
                    relation=group["relation"],
                    reference_id=group["reference"],
                    compared_count=group["compared"],
                    best_value=None if group["best_value"] is None else Decimal(group["best_value"]),
                    best=frozenset(group["best"]),
                    tied=frozenset(group["tied"]),
                    best_configurations=group["best_configurations"],
                    counted_with={int(pk): tuple(value) for pk, value in group["counted_with"].items()},
                )
                for group in groups
            ]
            for include, groups in data["groups"].items()
        },
        charts_sentences={include == "True": sentence for include, sentence in data["charts"].items()},
    )


def protocol_summary(*, protocol: Protocol) -> Summary:
    """The protocol's summary: the stored one while it is current, else computed and stored."""
    changes, summaries = ProtocolChanges._meta.db_table, ProtocolSummary._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT number FROM {changes} WHERE protocol_id = %s), s.number, s.data "
            f"FROM (SELECT 1) AS one LEFT JOIN {summaries} s ON s.protocol_id = %s",
            [protocol.pk, protocol.pk],
        )
        current, number, text = cursor.fetchone()
    current = current or 0
    if number == current and text is not None:
        data = json.loads(text)
        if data.get("format") == FORMAT and data.get("direction") == protocol.metric_direction:
            return _summary(data)
    # The rows are read after the number: a write committed in between leaves the summary stored
    # under a number that is no longer current, and the next reader computes it again.
    data = summary_compute(protocol=protocol)
    _store(protocol_id=protocol.pk, number=current, text=json.dumps(data, separators=(",", ":")))
    return _summary(data)


def _store(*, protocol_id: int, number: int, text: str) -> None:
    """Keep the summary for the next reader, unless the database is busy with a writer (SQLite:
    one writer at a time; the reader does not wait for it) or refuses: it is computed again then."""
    table = ProtocolSummary._meta.db_table
    sqlite = connection.vendor == "sqlite"
    try:
        with connection.cursor() as cursor:
            if sqlite:
                cursor.execute("PRAGMA busy_timeout")
                (waits,) = cursor.fetchone()
                cursor.execute("PRAGMA busy_timeout = 0")
            try:
                with transaction.atomic():
                    cursor.execute(
                        f"INSERT INTO {table} (protocol_id, number, data) VALUES (%s, %s, %s) "
                        f"ON CONFLICT (protocol_id) DO UPDATE SET number = excluded.number, data = excluded.data",
                        [protocol_id, number, text],
                    )
            finally:
                if sqlite:
                    cursor.execute(f"PRAGMA busy_timeout = {int(waits)}")
    except DatabaseError:
        pass
