"""The rows of a release: the catalogue read in chunks and shaped into the bundle's tables
(their schemas are `releases.table_schemas`).

`releases.bundle` (no ORM) turns the rows into files; this module is the ORM side. Every query
runs in keyset-paginated chunks (`records.exports.chunks_by_key`: no cursor stays open while the
build writes its progress), so no table is ever held in memory whole: the writer streams key-ordered
rows a chunk at a time, and its external sort keeps at most one chunk of rows.

What goes in: every protocol, dataset and task, configuration, source, result and evidence row, whatever its review state, with its state and a `comparable` column
(true only when the source was checked and the record is not excluded) so consumers can filter;
excluded rows carry their concern. Every work, model, model alias and task equivalence (the
identity tables), and the agreements `records.agreement` computes over every evaluation
(`releases.identity_rows`: a task family at a time) with the measurements each counts. Decimals are written as stored (`serialise_decimal`), ids are the
records' stable ids, and rows are in code point order of their primary key: read in that order
where the database gives it (SQLite: `reads_in_key_order`), else sorted by the writer in Python.

As the writer consumes the rows, each record's (type, stable id, sha256 of its exported values) is
handed to a membership sink: that is what `ReleaseRecord` stores, so a release's change from the
previous one is a comparison of memberships.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import json.encoder
from collections.abc import Callable, Iterable, Iterator, Mapping
from operator import itemgetter
from pathlib import Path

from django.db import connection
from django.db.models import Count, Max

from benchmarks.selectors import reviewed_recipe_protocols
from records import coverage, exports
from records.agreement import AGREEMENT_RULE
from records.models import (
    BaselineRole,
    Configuration,
    Dataset,
    Evaluation,
    EvidenceRow,
    GenomicModel,
    Limitation,
    ModelAlias,
    Protocol,
    Result,
    Source,
    TaskEquivalence,
    Work,
)
from releases import citation, conf, identity_rows, matrix
from releases.bundle import BundleResult, ColumnChunks, EarlierRelease, KeyOrdered, TableSpec, write_bundle
from releases.digests import _json_value, content_digest, digest_text  # noqa: F401  (re-exported: tests, callers)
from releases.matrix import MembershipSink
from releases.table_schemas import (
    BASELINE_KINDS,
    CONFIGURATION_TABLE,
    DATASET_TABLE,
    EVIDENCE,
    MEASURED_BY,
    MODEL_EVALUATION_MATRIX,
    PROTOCOL_COVERAGE,
    PROTOCOL_TABLE,
    REVIEW_STATES,
    SOURCE_TABLE,
    TABLES,
)
from reviews.models import ReviewState

PACKAGE_NAME = "genomic-model-benchmark-evidence"
PACKAGE_TITLE = "Benchmark evidence about genomic foundation models"
FORMAT_NAME = "benchmark-evidence-release"
# 2: the protocol, dataset and configuration tables; the matrix's provenance, uncertainty and
# relation columns; decimals with every recorded digit. 3: works, models and their aliases, task
# equivalences, agreements and their measurements; the matrix's model and a copy's original. Content
# digests of releases in another format are not compared (releases.services._change_querysets).
FORMAT_VERSION = 3

# The record types a portal release tracks in its memberships (lower-case model names).
RECORD_TYPES = (
    *("protocol", "evaluation", "result", "configuration", "dataset", "source", "evidencerow", "baselinerole"),
    *identity_rows.RECORD_TYPES,
)


def release_metadata() -> dict[str, object]:
    """release.json: nothing that depends on the date, the id, the host or the time of the build."""
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "publisher": conf.site_name(),
        "tables": [spec.name for spec in TABLES],
        "comparable": "Compare only rows whose comparable column is true: their source was checked and they are not excluded.",
        "agreement_rule": AGREEMENT_RULE,
    }


def _tracked(
    rows: Iterable[dict[str, object]], spec: TableSpec, record_type: str, sink: MembershipSink | None
) -> Iterator[dict[str, object]]:
    if sink is None:
        yield from rows
        return
    key = spec.primary_key[0]
    names = [f.name for f in spec.fields]
    exported = itemgetter(*names) if len(names) > 1 else (lambda row: [row[names[0]]])
    for row in rows:
        sink.add(record_type, str(row[key]), content_digest(exported(row)))
        yield row


def reads_in_key_order() -> bool:
    """Whether the database returns stable ids in the bundle's order, code point order (that is UTF-8
    byte order): SQLite compares text with its BINARY collation, a memcmp of the UTF-8 bytes, and its
    unique index on stable_id gives that order for free. PostgreSQL orders by the database's
    collation (rarely "C"): there the rows are read by pk and the writer sorts them (its external sort).
    """
    return connection.vendor == "sqlite"


def _key() -> str:
    """The column the tables are read in chunks by: stable_id where that is the bundle's order."""
    return "stable_id" if reads_in_key_order() else "pk"


# --------------------------------------------------------------------- rows


def coverage_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    """protocol_coverage: each protocol's coverage as records.coverage computes it for the public page
    (evaluations counted, baseline roles and whether they are measured, reviewed recipe), in chunks."""
    protocols = Protocol.objects.values(
        "pk",
        "stable_id",
        "title",
        "metric_name",
        "metric_unit",
        "metric_direction",
        "review_state",
        "concern",
        "source__stable_id",
        "source_locator",
    )
    for chunk in exports.chunks_by_key(protocols, key=_key(), chunk_size=chunk_size):
        pks = [p["pk"] for p in chunk]
        summaries = coverage.protocol_summaries(
            {p["pk"]: p["stable_id"] for p in chunk},
            coverage.state_groups(pks),
            with_recipe=reviewed_recipe_protocols([p["stable_id"] for p in chunk]),
        )
        results = coverage.result_counts(pks)
        for protocol in chunk:
            summary = summaries[protocol["pk"]]
            row: dict[str, object] = {
                "protocol_id": protocol["stable_id"],
                "title": protocol["title"],
                "metric_name": protocol["metric_name"],
                "metric_unit": protocol["metric_unit"],
                "metric_direction": protocol["metric_direction"],
                "review_state": protocol["review_state"],
                "comparable": protocol["review_state"] == ReviewState.SOURCE_CHECKED,
                "concern": protocol["concern"],
                "source_id": protocol["source__stable_id"],
                "source_locator": protocol["source_locator"],
                "evaluations": summary.evaluations,
                "results": results.get(protocol["pk"], 0),
                "has_reviewed_recipe": summary.has_reviewed_recipe,
            }
            for state in REVIEW_STATES:
                row[f"evaluations_{state}"] = summary.by_state.get(state, 0)
            for party in MEASURED_BY:
                row[f"evaluations_measured_by_{party}"] = summary.by_party.get(party, 0)
            for kind in BASELINE_KINDS:
                role = summary.roles.get(kind)
                row[f"{kind}_role_id"] = role.stable_id if role else None
                row[f"{kind}_status"] = role.status if role else None
                row[f"{kind}_configuration_id"] = role.configuration_id if role else None
                row[f"{kind}_measured"] = role.measured if role else None
            yield row


def matrix_rows(*, chunk_size: int, memberships: MembershipSink | None = None) -> Iterator[dict[str, object]]:
    """Every result, in the columns the protocol pages' downloads use too (records.exports), each
    reported to `memberships` with its digest (`releases.matrix`: evaluations read once each)."""
    return matrix.matrix_rows(chunk_size=chunk_size, key=_key(), sink=memberships)


def _plain_rows(queryset, columns: Mapping[str, str], *, chunk_size: int) -> Iterator[dict[str, object]]:
    """Rows of `columns` (table column -> lookup) read in keyset chunks."""
    names = list(columns)
    for values in exports.values_by_pk(queryset, columns.values(), chunk_size=chunk_size, key=_key()):
        yield dict(zip(names, values, strict=True))


_SOURCE_COLUMNS = {
    "source_id": "stable_id",
    "title": "title",
    "venue": "venue",
    "kind": "kind",
    "authors_short": "authors_short",
    "citation": "citation",
    "published_date": "published_date",
    "doi": "doi",
    "pmcid": "pmcid",
    "arxiv_id": "arxiv_id",
    "arxiv_version": "arxiv_version",
    "url": "url",
    "commit": "commit",
    "copy_consulted": "copy_consulted",
    "work_id": "work__stable_id",
}
_DATASET_COLUMNS = {
    "dataset_id": "stable_id",
    "name": "name",
    "description": "description",
    "suite_id": "suite__stable_id",
    "task_key": "task_key",
    "position": "position",
    "train_size": "train_size",
    "test_size": "test_size",
    "num_classes": "num_classes",
    "sequence_length_bp": "sequence_length_bp",
    "metric": "metric",
    "source_id": "source__stable_id",
    "source_locator": "source_locator",
}
_CONFIGURATION_COLUMNS = {
    "configuration_id": "stable_id",
    "name": "name",
    "short_name": "short_name",
    "family": "family",
    "parameter_count": "parameter_count",
    "method": "method",
    "description": "description",
    "source_id": "source__stable_id",
    "model_id": "model__stable_id",
}
_PROTOCOL_COLUMNS = {
    "protocol_id": "stable_id",
    "title": "title",
    "summary": "summary",
    "procedure": "procedure",
    "version_label": "version_label",
    "metric_name": "metric_name",
    "metric_short_name": "metric_short_name",
    "metric_description": "metric_description",
    "metric_unit": "metric_unit",
    "metric_direction": "metric_direction",
    "source_id": "source__stable_id",
    "source_locator": "source_locator",
    "review_state": "review_state",
    "concern": "concern",
}


def source_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    return _plain_rows(Source.objects.all(), _SOURCE_COLUMNS, chunk_size=chunk_size)


def dataset_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    return _plain_rows(Dataset.objects.all(), _DATASET_COLUMNS, chunk_size=chunk_size)


def configuration_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    return _plain_rows(Configuration.objects.all(), _CONFIGURATION_COLUMNS, chunk_size=chunk_size)


def protocol_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    """Protocols with their dataset ids and ordered limitations (two queries per chunk)."""
    protocols = Protocol.objects.values("pk", *_PROTOCOL_COLUMNS.values())
    for chunk in exports.chunks_by_key(protocols, key=_key(), chunk_size=chunk_size):
        pks = [p["pk"] for p in chunk]
        datasets: dict[int, list[str]] = {pk: [] for pk in pks}
        for protocol_id, dataset_id in Protocol.datasets.through.objects.filter(protocol_id__in=pks).values_list(
            "protocol_id", "dataset__stable_id"
        ):
            datasets[protocol_id].append(dataset_id)
        limitations: dict[int, list[str]] = {pk: [] for pk in pks}
        for protocol_id, text in (
            Limitation.objects.filter(protocol_id__in=pks)
            .order_by("protocol_id", "position")
            .values_list("protocol_id", "text")
        ):
            limitations[protocol_id].append(text)
        for protocol in chunk:
            row = {name: protocol[lookup] for name, lookup in _PROTOCOL_COLUMNS.items()}
            row["comparable"] = protocol["review_state"] == ReviewState.SOURCE_CHECKED
            row["dataset_ids"] = " ".join(sorted(datasets[protocol["pk"]]))
            row["limitations"] = (
                json.dumps(limitations[protocol["pk"]], ensure_ascii=False) if limitations[protocol["pk"]] else ""
            )
            yield row


_EVIDENCE_COLUMNS = {
    "evidence_id": "stable_id",
    "protocol_id": "protocol__stable_id",
    "evaluation_id": "evaluation__stable_id",
    "property_name": "property_name",
    "statement": "statement",
    "source_id": "source__stable_id",
    "locator": "locator",
    "quote": "quote",
    "support": "support",
    "review_state": "review_state",
    "concern": "concern",
}


def evidence_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    for row in _plain_rows(EvidenceRow.objects.all(), _EVIDENCE_COLUMNS, chunk_size=chunk_size):
        row["comparable"] = row["review_state"] == ReviewState.SOURCE_CHECKED
        yield row


def bundle_tables(*, chunk_size: int, memberships: MembershipSink | None = None) -> list[tuple[TableSpec, Iterable]]:
    """The tables as lazy row iterators, each reporting its records to `memberships` as it is read
    (protocol_coverage summarises protocols that protocol_table already tracks); `KeyOrdered` where
    the database reads them in the bundle's order (`reads_in_key_order`), so the writer need not sort."""
    tables: list[tuple[TableSpec, Iterable]] = [
        (PROTOCOL_COVERAGE, coverage_rows(chunk_size=chunk_size)),
        (
            MODEL_EVALUATION_MATRIX,
            ColumnChunks(
                matrix.matrix_columns(chunk_size=chunk_size, key=_key(), sink=memberships),
                key_ordered=reads_in_key_order(),
            ),
        ),
        (PROTOCOL_TABLE, _tracked(protocol_rows(chunk_size=chunk_size), PROTOCOL_TABLE, "protocol", memberships)),
        (DATASET_TABLE, _tracked(dataset_rows(chunk_size=chunk_size), DATASET_TABLE, "dataset", memberships)),
        (
            CONFIGURATION_TABLE,
            _tracked(configuration_rows(chunk_size=chunk_size), CONFIGURATION_TABLE, "configuration", memberships),
        ),
        (SOURCE_TABLE, _tracked(source_rows(chunk_size=chunk_size), SOURCE_TABLE, "source", memberships)),
        (EVIDENCE, _tracked(evidence_rows(chunk_size=chunk_size), EVIDENCE, "evidencerow", memberships)),
        *(
            (spec, _tracked(rows, spec, record_type, memberships))
            for spec, record_type, rows in identity_rows.identity_tables(chunk_size=chunk_size, key=_key())
        ),
    ]
    if reads_in_key_order():
        tables = [(spec, rows if isinstance(rows, ColumnChunks) else KeyOrdered(rows)) for spec, rows in tables]
    # Derived from the evaluations a task family at a time, in no key order: the writer sorts them.
    # Not memberships: what they hold is the evaluations', results' and identity records' values.
    return [*tables, *identity_rows.agreement_tables(chunk_size=chunk_size)]


def derived_memberships(*, chunk_size: int) -> Iterator[tuple[str, str, str]]:
    """Records whose values reach the bundle inside other tables' rows: evaluations (matrix and
    coverage) and baseline roles (coverage).

    Each digest covers exactly the values the bundle holds for the record.
    """
    evaluation_columns = [
        "stable_id",
        "protocol__stable_id",
        "configuration__stable_id",
        "dataset__stable_id",
        "measured_by",
        "measured_by_name",
        "repeats__stable_id",
        "reading_method",
        "setup",
        "aggregation",
        "uncertainty",
        "review_state",
        "concern",
        "source__stable_id",
        "source_locator",
        "quote",
        "original_source__stable_id",
        "original_citation",
        "original_locator",
        "original_basis",
        "original_reason",
    ]
    evaluations = Evaluation.objects.all()
    for values in exports.values_by_pk(evaluations, evaluation_columns, chunk_size=chunk_size, key=_key()):
        yield "evaluation", values[0], content_digest(values)
    roles = coverage.baseline_roles().values(
        "pk", "stable_id", "protocol__stable_id", "kind", "status", "configuration__stable_id", "measured"
    )
    for chunk in exports.chunks_by_key(roles, key=_key(), chunk_size=chunk_size):
        for role in chunk:
            digested = [
                role["stable_id"],
                role["protocol__stable_id"],
                role["kind"],
                role["status"],
                role["configuration__stable_id"],
                role["measured"],
            ]
            yield "baselinerole", role["stable_id"], content_digest(digested)


# ---------------------------------------------------------------- watermark


WATERMARK_RECIPE_CHUNK = 500  # protocol ids per recipe lookup (an IN list: databases cap its length)


def _watermarked_models():
    return (
        Protocol,
        Limitation,
        Evaluation,
        Result,
        Configuration,
        Dataset,
        Source,
        EvidenceRow,
        BaselineRole,
        Work,
        GenomicModel,
        ModelAlias,
        TaskEquivalence,
    )


def catalogue_watermark() -> str:
    """A fingerprint that changes whenever anything a release exports may have changed.

    Every write of a curated record goes through a service that writes a simple-history row, so
    the number and the highest id of each exported model's history rows (plus the live row count,
    for deletions that bypassed history) move with every change; the set of protocols with a
    reviewed recipe covers the one column that comes from outside the catalogue. Two equal
    watermarks mean the exported content is equal; unequal ones only that it may differ.
    A constant number of queries, whatever the catalogue's size.
    """
    state: dict[str, object] = {}
    for model in _watermarked_models():
        history = model.history.model.objects.order_by().aggregate(n=Count("pk"), last=Max("pk"))
        state[model._meta.label_lower] = [model._default_manager.order_by().count(), history["n"], history["last"]]
    with_recipe: set[str] = set()
    protocols = Protocol.objects.values("pk", "stable_id")
    for chunk in exports.chunks_by_pk(protocols, chunk_size=WATERMARK_RECIPE_CHUNK):
        with_recipe |= reviewed_recipe_protocols([p["stable_id"] for p in chunk])
    state["reviewed_recipes"] = sorted(with_recipe)
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode("utf-8")).hexdigest()


# -------------------------------------------------------------------- write


def bundle_write(
    *,
    output_dir: Path,
    release_date: datetime.date,
    chunk_size: int,
    memberships: MembershipSink | None = None,
    progress: Callable[[str, int], None] | None = None,
    changes_against: EarlierRelease | None = None,
) -> BundleResult:
    """Write the catalogue's bundle for `release_date` under `output_dir` (see `releases.bundle.write_bundle`),
    each record reported to `memberships` as its table is written, with the change list against
    `changes_against` (none without)."""
    return write_bundle(
        tables=bundle_tables(chunk_size=chunk_size, memberships=memberships),
        release_date=release_date,
        release_metadata=release_metadata(),
        package_name=PACKAGE_NAME,
        package_title=PACKAGE_TITLE,
        output_dir=output_dir,
        bag_info_extra=bag_info_extra(),
        publisher=citation.publisher(),
        changes_against=changes_against,
        chunk_rows=chunk_size,
        progress=progress,
    )


def bag_info_extra() -> Mapping[str, str]:
    return {"Source-Organization": conf.site_name(), "External-Description": PACKAGE_TITLE}


def table_row_counts() -> dict[str, int]:
    """How many rows each table will have (the agreements' tables: at most so many): the build's
    progress is measured against these."""
    return {
        PROTOCOL_COVERAGE.name: Protocol.objects.count(),
        MODEL_EVALUATION_MATRIX.name: Result.objects.count(),
        PROTOCOL_TABLE.name: Protocol.objects.count(),
        DATASET_TABLE.name: Dataset.objects.count(),
        CONFIGURATION_TABLE.name: Configuration.objects.count(),
        SOURCE_TABLE.name: Source.objects.count(),
        EVIDENCE.name: EvidenceRow.objects.count(),
        **identity_rows.row_counts(),
    }
