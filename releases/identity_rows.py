"""The rows of the release's identity tables (`releases.identity_tables`): works, models, model
aliases and task equivalences read in keyset chunks as the other tables are (`releases.catalogue_rows`);
and the agreements, `records.agreement`'s verdicts over every evaluation of the catalogue, a
task family at a time and, inside a family, a batch of subjects at a time, so that memory holds
about a chunk of evaluations and results however large the catalogue (besides the few columns of
each protocol, task, source and model they name, read once): more only where one subject's evidence
on one task family is larger (every printing of its measurements is read at once, as the rules
compare them).

The rules are `records.agreement`'s, over evaluations read as values (`records.evidence_rows`, as
the task and model pages read them). A verdict reads only its own subject's evaluations on its own
task family, so computing a family's subjects in batches gives what one call over the whole family
gives (what the task page shows), with one care: an original that another evaluation repeats is
keyed as its repeat keys it (`records.agreement.measurements`), so each batch is told which of the
family's evaluations are repeated, whoever repeats them.

Each agreement is keyed "<subject kind>:<subject stable id>|<task stable id>|<metric>", the task
being the family's task whose stable id comes first: the key moves only when the family does, not
when a value changes which task an agreement's first measurement is on. The rows come in no
particular order: the writer sorts them on that key (its external sort, memory bounded by a chunk).
"""

from __future__ import annotations

import pickle
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from django.db.models import Count, Model, Q, QuerySet

from records import agreement as rules
from records import evidence_rows, exports
from records.models import (
    Dataset,
    Evaluation,
    GenomicModel,
    ModelAlias,
    Protocol,
    Relation,
    Result,
    Source,
    TaskEquivalence,
    Work,
)
from releases.bundle import TableSpec
from releases.identity_tables import (
    AGREEMENT_MEASUREMENTS,
    AGREEMENTS,
    MODEL_ALIAS_TABLE,
    MODEL_TABLE,
    TASK_EQUIVALENCE_TABLE,
    WORK_TABLE,
)

# The record types of the identity tables, tracked in a release's memberships (lower-case model names).
RECORD_TYPES = ("work", "genomicmodel", "modelalias", "taskequivalence")

# ------------------------------------------------------------------ identity


def _plain_rows(
    queryset: QuerySet, columns: dict[str, str], *, chunk_size: int, key: str
) -> Iterator[dict[str, object]]:
    """Rows of `columns` (table column -> lookup) read in keyset chunks on `key`."""
    names = list(columns)
    for values in exports.values_by_pk(queryset, columns.values(), chunk_size=chunk_size, key=key):
        yield dict(zip(names, values, strict=True))


_WORK_COLUMNS = {"work_id": "stable_id", "title": "title", "authors_short": "authors_short"}
_MODEL_COLUMNS = {
    "model_id": "stable_id",
    "name": "name",
    "family": "family",
    "parameter_count": "parameter_count",
    "public_id": "public_id",
    "revision": "revision",
    "introduced_in_work_id": "introduced_in__stable_id",
    "merged_into_model_id": "merged_into__stable_id",
}
_MODEL_ALIAS_COLUMNS = {
    "alias_id": "stable_id",
    "model_id": "model__stable_id",
    "alias": "alias",
    "alias_key": "key",
    "source_id": "source__stable_id",
    "locator": "locator",
    "basis": "basis",
    "quote": "quote",
    "reason": "reason",
    "review_state": "review_state",
}
_TASK_EQUIVALENCE_COLUMNS = {
    "task_equivalence_id": "stable_id",
    "task_id": "task__stable_id",
    "same_as_id": "same_as__stable_id",
    "source_id": "source__stable_id",
    "locator": "locator",
    "quote": "quote",
    "basis": "basis",
    "reason": "reason",
    "review_state": "review_state",
}


def work_rows(*, chunk_size: int, key: str) -> Iterator[dict[str, object]]:
    return _plain_rows(Work.objects.all(), _WORK_COLUMNS, chunk_size=chunk_size, key=key)


def model_rows(*, chunk_size: int, key: str) -> Iterator[dict[str, object]]:
    return _plain_rows(GenomicModel.objects.all(), _MODEL_COLUMNS, chunk_size=chunk_size, key=key)


def model_alias_rows(*, chunk_size: int, key: str) -> Iterator[dict[str, object]]:
    return _plain_rows(ModelAlias.objects.all(), _MODEL_ALIAS_COLUMNS, chunk_size=chunk_size, key=key)


def task_equivalence_rows(*, chunk_size: int, key: str) -> Iterator[dict[str, object]]:
    return _plain_rows(TaskEquivalence.objects.all(), _TASK_EQUIVALENCE_COLUMNS, chunk_size=chunk_size, key=key)


# ---------------------------------------------------------------- agreements


@dataclass(frozen=True)
class Family:
    """A task family: its tasks' ids, and the stable id and name of the one that keys its agreements."""

    task_ids: tuple[int, ...]
    task_id: str
    task_name: str
    task_stable_ids: str  # every task's stable id, space-separated, sorted


def _families() -> tuple[dict[int, int], Iterator[Family]]:
    """Task id -> its family's root (records.agreement.task_families), and the families of every task
    some evaluation measures, one query of their tasks per family."""
    roots = rules.task_families()
    measured = (
        Evaluation.objects.exclude(different_measurement__gt="")
        .order_by("dataset_id")
        .values_list("dataset_id", flat=True)
        .distinct()
    )
    members: dict[int, set[int]] = defaultdict(set)
    for task, root in roots.items():
        members[root].add(task)
    family_roots = sorted({roots.get(task, task) for task in measured})

    def families() -> Iterator[Family]:
        for root in family_roots:
            ids = tuple(sorted(members.get(root) or {root}))
            tasks = sorted(Dataset.objects.filter(pk__in=ids).values_list("stable_id", "name"))
            yield Family(
                task_ids=ids,
                task_id=tasks[0][0],
                task_name=tasks[0][1],
                task_stable_ids=" ".join(stable_id for stable_id, _ in tasks),
            )

    return roots, families()


def _subject_batches(family: Family, *, chunk_size: int) -> Iterator[tuple[list[int], list[int]]]:
    """The family's subjects, (model ids, ids of configurations naming no model), in batches of about
    `chunk_size` evaluations and results read (one subject with more makes a batch of its own)."""
    counts: dict[tuple[str, int], int] = defaultdict(int)
    per_configuration = (
        Evaluation.objects.exclude(different_measurement__gt="")
        .filter(dataset_id__in=family.task_ids)
        .order_by()
        .values_list("configuration_id", "configuration__model_id")
        .annotate(
            evaluations_read=Count("id", distinct=True),
            results_read=Count("results", filter=Q(results__relation=Relation.ABSOLUTE)),
        )
    )
    for configuration_id, model_id, evaluations, results in per_configuration:
        counts[("model", model_id) if model_id else ("configuration", configuration_id)] += evaluations + results
    models: list[int] = []
    configurations: list[int] = []
    held = 0
    for (kind, pk), n in sorted(counts.items()):
        if held and held + n > chunk_size:
            yield models, configurations
            models, configurations, held = [], [], 0
        (models if kind == "model" else configurations).append(pk)
        held += n
    if held:
        yield models, configurations


#: What the agreement rules and the two tables read of the records an evaluation names.
_RELATED_COLUMNS: dict[type[Model], tuple[str, ...]] = {
    Protocol: ("metric_short_name", "metric_name", "metric_unit", "metric_scale"),
    Dataset: ("stable_id", "name"),
    Source: ("stable_id", "work_id", "published_date", "arxiv_version"),
    GenomicModel: ("stable_id", "name"),
}


def family_agreements(*, chunk_size: int) -> Iterator[tuple[Family, rules.Agreement]]:
    """Every agreement of the catalogue with its task family, a batch of subjects' evaluations at a
    time, read as values (`records.evidence_rows`); the protocols, tasks, sources and models they
    name are read once each, for the columns the rules read (a few per paper)."""
    roots, families = _families()
    related = evidence_rows.RelatedRecords(columns=_RELATED_COLUMNS)
    for family in families:
        in_family = {"dataset_id__in": family.task_ids}
        repeated = set(
            Evaluation.objects.exclude(different_measurement__gt="")
            .filter(**in_family, repeats_id__isnull=False)
            .values_list("repeats_id", flat=True)
        )
        for models, configurations in _subject_batches(family, chunk_size=chunk_size):
            evaluations: list[evidence_rows.EvaluationRow] = []
            if models:
                evaluations += evidence_rows.evaluation_rows(
                    lookups={**in_family, "configuration__model_id__in": models}, related=related
                )
            if configurations:
                evaluations += evidence_rows.evaluation_rows(
                    lookups={**in_family, "configuration_id__in": configurations, "configuration__model__isnull": True},
                    related=related,
                )
            yield from ((family, found) for found in rules.agreements(evaluations, roots, repeated))


def agreement_key(found: rules.Agreement, family: Family) -> str:
    kind = "model" if found.subject_is_model else "configuration"
    return f"{kind}:{found.subject.stable_id}|{family.task_id}|{found.metric}"


def _agreement_row(family: Family, found: rules.Agreement) -> dict[str, object]:
    is_model = found.subject_is_model
    return {
        "agreement_id": agreement_key(found, family),
        "subject_kind": "model" if is_model else "configuration",
        "model_id": found.subject.stable_id if is_model else None,
        "configuration_id": None if is_model else found.subject.stable_id,
        "subject_name": found.subject.name,
        "task_id": family.task_id,
        "task_name": family.task_name,
        "family_task_ids": family.task_stable_ids,
        "metric": found.metric,
        "verdict": found.verdict,
        "verdict_label": found.verdict_label,
        "measurements": len(found.measurements),
        "printings": sum(len(measurement.printings) for measurement in found.measurements),
    }


def _measurement_rows(family: Family, found: rules.Agreement) -> Iterator[dict[str, object]]:
    """For each measurement of the agreement the printing compared, then its other printings, each
    with how it counts (records.rules.evidence)."""
    key = agreement_key(found, family)
    for measurement in found.measurements:
        shown = measurement.shown
        disagreeing = {id(d.printing): d.kind for d in measurement.disagreements}
        for printing in [shown, *measurement.copies]:
            evaluation, result = printing.evaluation, printing.result
            yield {
                "agreement_id": key,
                "result_id": result.stable_id,
                "evaluation_id": evaluation.stable_id,
                "value": result.value,
                "unit": result.unit,
                "source_id": evaluation.source.stable_id if evaluation.source is not None else None,
                "locator": evaluation.source_locator,
                "quote": evaluation.quote,
                "measured_by": evaluation.measured_by,
                "review_state": evaluation.review_state,
                "counted_as": "compared" if printing is shown else disagreeing.get(id(printing), "copy"),
                "counted_with_result_id": shown.result.stable_id,
            }


def agreement_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    """The agreements table's rows (releases.table_schemas.AGREEMENTS), in no particular order."""
    for family, found in family_agreements(chunk_size=chunk_size):
        yield _agreement_row(family, found)


def agreement_measurement_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    """The agreement_measurements table's rows (releases.table_schemas.AGREEMENT_MEASUREMENTS): for each
    measurement the printing compared, then its copies; in no particular order."""
    for family, found in family_agreements(chunk_size=chunk_size):
        yield from _measurement_rows(family, found)


class _AgreementsOnce:
    """Both agreement tables from one computation of the agreements (the costliest rows of a build):
    the agreements' rows as they are computed, while their measurements' rows are pickled, a batch
    at a time, to a temporary file that the second table reads back once the first is written.
    Memory holds one batch, whatever the catalogue's size."""

    def __init__(self, *, chunk_size: int) -> None:
        self.chunk_size = chunk_size
        self.spill: IO[bytes] | None = None
        self.written = False

    def agreements(self) -> Iterator[dict[str, object]]:
        self.spill = tempfile.TemporaryFile()
        batch: list[dict[str, object]] = []
        for family, found in family_agreements(chunk_size=self.chunk_size):
            yield _agreement_row(family, found)
            batch.extend(_measurement_rows(family, found))
            if len(batch) >= self.chunk_size:
                pickle.dump(batch, self.spill, protocol=pickle.HIGHEST_PROTOCOL)
                batch = []
        pickle.dump(batch, self.spill, protocol=pickle.HIGHEST_PROTOCOL)
        self.written = True

    def measurements(self) -> Iterator[dict[str, object]]:
        if self.spill is None or not self.written:
            raise RuntimeError("the agreements table is written before its measurements")
        spill, self.spill = self.spill, None
        with spill:
            spill.seek(0)
            while True:
                try:
                    batch = pickle.load(spill)
                except EOFError:
                    return
                yield from batch


def identity_tables(*, chunk_size: int, key: str) -> list[tuple[TableSpec, str, Iterator[dict[str, object]]]]:
    """The identity tables (spec, record type, lazy rows read in chunks on `key`), in the bundle's order."""
    return [
        (WORK_TABLE, "work", work_rows(chunk_size=chunk_size, key=key)),
        (MODEL_TABLE, "genomicmodel", model_rows(chunk_size=chunk_size, key=key)),
        (MODEL_ALIAS_TABLE, "modelalias", model_alias_rows(chunk_size=chunk_size, key=key)),
        (TASK_EQUIVALENCE_TABLE, "taskequivalence", task_equivalence_rows(chunk_size=chunk_size, key=key)),
    ]


def agreement_tables(*, chunk_size: int) -> list[tuple[TableSpec, Iterator[dict[str, object]]]]:
    """The agreements and their measurements, derived from the evaluations a task family at a time in
    no key order (the writer sorts them), computed once for both tables (`_AgreementsOnce`); not memberships: what they hold is the evaluations',
    results' and identity records' values."""
    once = _AgreementsOnce(chunk_size=chunk_size)
    return [(AGREEMENTS, once.agreements()), (AGREEMENT_MEASUREMENTS, once.measurements())]


def row_counts() -> dict[str, int]:
    """How many rows each table will have; the agreements' tables at most so many (evaluations,
    absolute results): the build's progress is measured against these."""
    evaluations = Evaluation.objects.exclude(different_measurement__gt="")
    results = Result.objects.filter(relation=Relation.ABSOLUTE).exclude(evaluation__different_measurement__gt="")
    return {
        WORK_TABLE.name: Work.objects.count(),
        MODEL_TABLE.name: GenomicModel.objects.count(),
        MODEL_ALIAS_TABLE.name: ModelAlias.objects.count(),
        TASK_EQUIVALENCE_TABLE.name: TaskEquivalence.objects.count(),
        AGREEMENTS.name: evaluations.count(),
        AGREEMENT_MEASUREMENTS.name: results.count(),
    }
