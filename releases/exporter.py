"""The rows of a release: the catalogue read in chunks and shaped into the bundle's four tables.

`releases.bundle` (no ORM) turns the rows into files; this module is the ORM side. Every query
runs in keyset-paginated chunks (`records.exports.chunks_by_pk`: no cursor stays open while the
build writes its progress), so no table is ever held in memory whole: the writer's external sort
keeps at most one chunk of rows.

What goes in: every record, whatever its review state, with its state and a `comparable` column
(true only when the source was checked and the record is not excluded) so consumers can filter;
excluded rows carry their concern. Decimals are written as stored (`serialise_decimal`), ids are the
records' stable ids, and rows are sorted by the writer in Python on their primary key.

As the writer consumes the rows, each record's (type, stable id, sha256 of its exported values) is
handed to a membership sink: that is what `ReleaseRecord` stores, so a release's change from the
previous one is a comparison of memberships.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Protocol as TypingProtocol

from django.db.models import Count, Exists, Max, OuterRef
from django.utils.module_loading import import_string

from records import exports
from records import models as m
from releases import conf
from releases.bundle import BundleResult, Field, ForeignKey, TableSpec, serialise_decimal, write_bundle
from reviews.models import ReviewState

PACKAGE_NAME = "genomic-model-benchmark-evidence"
PACKAGE_TITLE = "Benchmark evidence about genomic foundation models"
FORMAT_NAME = "benchmark-evidence-release"
FORMAT_VERSION = 1

# The record types a portal release tracks in its memberships (lower-case model names).
RECORD_TYPES = ("protocol", "evaluation", "result", "configuration", "dataset", "source", "evidencerow", "baselinerole")

REVIEW_STATES = tuple(ReviewState.values)
ORIGINS = tuple(m.Origin.values)
BASELINE_KINDS = tuple(m.BaselineKind.values)


class MembershipSink(TypingProtocol):
    def add(self, record_type: str, stable_id: str, content_sha256: str) -> None: ...


# ------------------------------------------------------------------ schemas


def _coverage_fields() -> tuple[Field, ...]:
    fields = [
        Field("protocol_id", "string", title="Protocol", description="Stable id of the protocol."),
        Field("title", "string", required=True),
        Field("metric_name", "string"),
        Field("metric_unit", "string", required=True, description="Every result of the protocol is in this unit."),
        Field("metric_direction", "string", required=True, enum=tuple(m.Direction.values)),
        Field("review_state", "string", required=True, enum=REVIEW_STATES, description="Review state of the protocol record."),
        Field("comparable", "boolean", required=True, description="True when the protocol's source was checked and it is not excluded."),
        Field("concern", "string", description="Why the protocol is excluded from comparison, when it is."),
        Field("source_id", "string", required=True, description="Stable id of the protocol's source (source_table)."),
        Field("source_locator", "string"),
        Field("evaluations", "integer", required=True, description="Evaluations of the protocol, in any review state."),
    ]
    fields += [
        Field(f"evaluations_{state}", "integer", required=True, description=f"Evaluations whose review state is {state}.")
        for state in REVIEW_STATES
    ]
    fields += [
        Field(f"evaluations_{origin}", "integer", required=True, description=f"Evaluations whose origin is {origin}.")
        for origin in ORIGINS
    ]
    fields.append(Field("results", "integer", required=True, description="Result rows of the protocol's evaluations."))
    for kind in BASELINE_KINDS:
        fields += [
            Field(f"{kind}_role_id", "string", description=f"Stable id of the protocol's {kind} baseline role, if any."),
            Field(f"{kind}_status", "string", enum=tuple(m.BaselineStatus.values)),
            Field(f"{kind}_configuration_id", "string", description="The configuration that fills the role, once selected."),
            Field(
                f"{kind}_measured", "boolean",
                description="True when a source-checked evaluation of the protocol measures the role's configuration.",
            ),
        ]
    fields.append(Field("has_reviewed_recipe", "boolean", required=True, description="Whether a reviewed benchmark recipe exists."))
    return tuple(fields)


PROTOCOL_COVERAGE = TableSpec(
    name="protocol_coverage",
    title="Protocol coverage",
    description="One row per protocol: its evaluations counted by review state and origin, its baseline roles, its recipe.",
    fields=_coverage_fields(),
    primary_key=("protocol_id",),
    foreign_keys=(ForeignKey(("source_id",), "source_table", ("source_id",)),),
)

MODEL_EVALUATION_MATRIX = TableSpec(
    name="model_evaluation_matrix",
    title="Model evaluation matrix",
    description=(
        "One row per result: a configuration evaluated under a protocol on a dataset. Compare only rows whose "
        "comparable column is true; excluded rows carry their concern."
    ),
    fields=(
        Field("result_id", "string", description="Stable id of the result."),
        Field("evaluation_id", "string", required=True),
        Field("protocol_id", "string", required=True),
        Field("configuration_id", "string", required=True),
        Field("configuration_name", "string", required=True),
        Field("dataset_id", "string", required=True),
        Field("dataset_name", "string", required=True),
        Field("metric_name", "string"),
        Field("value", "number", required=True, description="The exact value, as recorded."),
        Field("unit", "string", required=True),
        Field("printed_value", "string", description="The value as the source prints it."),
        Field("lower_bound", "number"),
        Field("upper_bound", "number"),
        Field("num_runs", "integer"),
        Field("origin", "string", required=True, enum=ORIGINS),
        Field("review_state", "string", required=True, enum=REVIEW_STATES, description="Review state of the evaluation."),
        Field("comparable", "boolean", required=True, description="True when the evaluation's source was checked and it is not excluded."),
        Field("concern", "string", description="Why the evaluation is excluded from comparison, when it is."),
        Field("source_id", "string", description="Stable id of the source reporting the value (empty when measured by this portal)."),
        Field("source_locator", "string"),
        Field("quote", "string", description="The source's words, verbatim."),
    ),
    primary_key=("result_id",),
    foreign_keys=(
        ForeignKey(("protocol_id",), "protocol_coverage", ("protocol_id",)),
        ForeignKey(("source_id",), "source_table", ("source_id",)),
    ),
)

SOURCE_TABLE = TableSpec(
    name="source_table",
    title="Sources",
    description="One row per source: papers, preprints, dataset cards, repositories and web pages.",
    fields=(
        Field("source_id", "string", description="Stable id of the source."),
        Field("title", "string", required=True),
        Field("venue", "string"),
        Field("kind", "string", required=True, enum=tuple(m.SourceKind.values)),
        Field("authors_short", "string"),
        Field("citation", "string"),
        Field("published_date", "date"),
        Field("doi", "string"),
        Field("pmcid", "string"),
        Field("url", "string"),
    ),
    primary_key=("source_id",),
)

EVIDENCE = TableSpec(
    name="evidence",
    title="Evidence",
    description="One row per evidence statement about a protocol or evaluation, with its source, locator and quote.",
    fields=(
        Field("evidence_id", "string", description="Stable id of the evidence row."),
        Field("protocol_id", "string", required=True),
        Field("evaluation_id", "string"),
        Field("property_name", "string"),
        Field("statement", "string", required=True),
        Field("source_id", "string", required=True),
        Field("locator", "string"),
        Field("quote", "string"),
        Field("support", "string", required=True, enum=tuple(m.EvidenceSupport.values)),
        Field("review_state", "string", required=True, enum=REVIEW_STATES),
        Field("comparable", "boolean", required=True),
        Field("concern", "string"),
    ),
    primary_key=("evidence_id",),
    foreign_keys=(
        ForeignKey(("protocol_id",), "protocol_coverage", ("protocol_id",)),
        ForeignKey(("source_id",), "source_table", ("source_id",)),
    ),
)

TABLES = (PROTOCOL_COVERAGE, MODEL_EVALUATION_MATRIX, SOURCE_TABLE, EVIDENCE)


def release_metadata() -> dict[str, object]:
    """release.json: nothing that depends on the date, the id, the host or the time of the build."""
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "publisher": conf.site_name(),
        "tables": [spec.name for spec in TABLES],
        "comparable": "Compare only rows whose comparable column is true: their source was checked and they are not excluded.",
    }


# ------------------------------------------------------------- row digests


def _json_value(value: object) -> object:
    if isinstance(value, decimal.Decimal):
        return serialise_decimal(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not exportable")


def content_digest(values: Iterable[object]) -> str:
    """sha256 of a record's exported values, in column order (the membership's content hash)."""
    text = json.dumps(list(values), default=_json_value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _tracked(
    rows: Iterable[dict[str, object]], spec: TableSpec, record_type: str, sink: MembershipSink | None
) -> Iterator[dict[str, object]]:
    key = spec.primary_key[0]
    names = [f.name for f in spec.fields]
    for row in rows:
        if sink is not None:
            sink.add(record_type, str(row[key]), content_digest(row[name] for name in names))
        yield row


# --------------------------------------------------------------------- rows


def coverage_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    protocols = m.Protocol.objects.values(
        "pk", "stable_id", "title", "metric_name", "metric_unit", "metric_direction", "review_state", "concern",
        "source__stable_id", "source_locator",
    )
    lookup = recipe_lookup()
    for chunk in exports.chunks_by_pk(protocols, chunk_size=chunk_size):
        pks = [p["pk"] for p in chunk]
        by_state_origin: dict[int, dict[str, int]] = {pk: {} for pk in pks}
        for item in (
            m.Evaluation.objects.filter(protocol_id__in=pks).order_by()
            .values("protocol_id", "review_state", "origin").annotate(n=Count("id"))
        ):
            counts = by_state_origin[item["protocol_id"]]
            counts[f"evaluations_{item['review_state']}"] = counts.get(f"evaluations_{item['review_state']}", 0) + item["n"]
            counts[f"evaluations_{item['origin']}"] = counts.get(f"evaluations_{item['origin']}", 0) + item["n"]
            counts["evaluations"] = counts.get("evaluations", 0) + item["n"]
        results = dict(
            m.Result.objects.filter(evaluation__protocol_id__in=pks).order_by()
            .values("evaluation__protocol_id").annotate(n=Count("id")).values_list("evaluation__protocol_id", "n")
        )
        roles: dict[int, dict[str, dict]] = {pk: {} for pk in pks}
        for role in _baseline_roles().filter(protocol_id__in=pks):
            roles[role["protocol_id"]][role["kind"]] = role
        with_recipe = lookup([p["stable_id"] for p in chunk])
        for protocol in chunk:
            counts = by_state_origin[protocol["pk"]]
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
                "evaluations": counts.get("evaluations", 0),
                "results": results.get(protocol["pk"], 0),
                "has_reviewed_recipe": protocol["stable_id"] in with_recipe,
            }
            for name in [*(f"evaluations_{s}" for s in REVIEW_STATES), *(f"evaluations_{o}" for o in ORIGINS)]:
                row[name] = counts.get(name, 0)
            for kind in BASELINE_KINDS:
                role = roles[protocol["pk"]].get(kind)
                row[f"{kind}_role_id"] = role["stable_id"] if role else None
                row[f"{kind}_status"] = role["status"] if role else None
                row[f"{kind}_configuration_id"] = role["configuration__stable_id"] if role else None
                row[f"{kind}_measured"] = role["measured"] if role else None
            yield row


def _baseline_roles():
    """Baseline roles with `measured`: a source-checked evaluation of the protocol measures its configuration."""
    measured = m.Evaluation.objects.filter(
        protocol_id=OuterRef("protocol_id"),
        configuration_id=OuterRef("configuration_id"),
        review_state=ReviewState.SOURCE_CHECKED,
    )
    return (
        m.BaselineRole.objects.order_by()
        .annotate(measured=Exists(measured))
        .values("pk", "protocol_id", "protocol__stable_id", "kind", "stable_id", "status", "configuration__stable_id", "measured")
    )


def matrix_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    """Every result, in the columns the protocol pages' downloads use too (records.exports)."""
    return exports.matrix_rows(m.Result.objects.all(), chunk_size=chunk_size)


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
    "url": "url",
}


def source_rows(*, chunk_size: int) -> Iterator[dict[str, object]]:
    names = list(_SOURCE_COLUMNS)
    for values in exports.values_by_pk(m.Source.objects.all(), _SOURCE_COLUMNS.values(), chunk_size=chunk_size):
        yield dict(zip(names, values))


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
    names = list(_EVIDENCE_COLUMNS)
    for values in exports.values_by_pk(m.EvidenceRow.objects.all(), _EVIDENCE_COLUMNS.values(), chunk_size=chunk_size):
        row = dict(zip(names, values))
        row["comparable"] = row["review_state"] == ReviewState.SOURCE_CHECKED
        yield row


def bundle_tables(*, chunk_size: int, memberships: MembershipSink | None = None) -> list[tuple[TableSpec, Iterator[dict]]]:
    """The four tables as lazy row iterators, each reporting its records to `memberships` as it is read."""
    return [
        (PROTOCOL_COVERAGE, _tracked(coverage_rows(chunk_size=chunk_size), PROTOCOL_COVERAGE, "protocol", memberships)),
        (MODEL_EVALUATION_MATRIX, _tracked(matrix_rows(chunk_size=chunk_size), MODEL_EVALUATION_MATRIX, "result", memberships)),
        (SOURCE_TABLE, _tracked(source_rows(chunk_size=chunk_size), SOURCE_TABLE, "source", memberships)),
        (EVIDENCE, _tracked(evidence_rows(chunk_size=chunk_size), EVIDENCE, "evidencerow", memberships)),
    ]


def derived_memberships(*, chunk_size: int) -> Iterator[tuple[str, str, str]]:
    """Records whose values reach the bundle inside other tables' rows: evaluations (matrix and
    coverage), the configurations and datasets evaluations use (matrix), baseline roles (coverage).

    Each digest covers exactly the values the bundle holds for the record.
    """
    evaluation_columns = [
        "stable_id", "protocol__stable_id", "configuration__stable_id", "dataset__stable_id", "origin", "review_state",
        "concern", "source__stable_id", "source_locator", "quote",
    ]
    for values in exports.values_by_pk(m.Evaluation.objects.all(), evaluation_columns, chunk_size=chunk_size):
        yield "evaluation", values[0], content_digest(values)
    used = m.Evaluation.objects.filter(configuration_id=OuterRef("pk"))
    for values in exports.values_by_pk(m.Configuration.objects.filter(Exists(used)), ["stable_id", "name"], chunk_size=chunk_size):
        yield "configuration", values[0], content_digest(values)
    used = m.Evaluation.objects.filter(dataset_id=OuterRef("pk"))
    for values in exports.values_by_pk(m.Dataset.objects.filter(Exists(used)), ["stable_id", "name"], chunk_size=chunk_size):
        yield "dataset", values[0], content_digest(values)
    for chunk in exports.chunks_by_pk(_baseline_roles(), chunk_size=chunk_size):
        for role in chunk:
            values = [role["stable_id"], role["protocol__stable_id"], role["kind"], role["status"], role["configuration__stable_id"], role["measured"]]
            yield "baselinerole", role["stable_id"], content_digest(values)


# ------------------------------------------------------------------ recipes


def recipe_lookup() -> Callable[[Collection[str]], set[str]]:
    path = conf.recipe_lookup_path()
    function = import_string(path) if path else None

    def lookup(protocol_stable_ids: Collection[str]) -> set[str]:
        return set(function(protocol_stable_ids)) if function and protocol_stable_ids else set()

    return lookup


# ---------------------------------------------------------------- watermark


WATERMARK_RECIPE_CHUNK = 500  # protocol ids per recipe lookup (an IN list: databases cap its length)


def _watermarked_models():
    return (m.Protocol, m.Evaluation, m.Result, m.Configuration, m.Dataset, m.Source, m.EvidenceRow, m.BaselineRole)


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
    lookup = recipe_lookup()
    with_recipe: set[str] = set()
    protocols = m.Protocol.objects.values("pk", "stable_id")
    for chunk in exports.chunks_by_pk(protocols, chunk_size=WATERMARK_RECIPE_CHUNK):
        with_recipe |= lookup([p["stable_id"] for p in chunk])
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
) -> BundleResult:
    """Write the catalogue's bundle for `release_date` under `output_dir` (see `releases.bundle.write_bundle`)."""
    return write_bundle(
        tables=bundle_tables(chunk_size=chunk_size, memberships=memberships),
        release_date=release_date,
        release_metadata=release_metadata(),
        package_name=PACKAGE_NAME,
        package_title=PACKAGE_TITLE,
        output_dir=output_dir,
        bag_info_extra=bag_info_extra(),
        chunk_rows=chunk_size,
        progress=progress,
    )


def bag_info_extra() -> Mapping[str, str]:
    return {"Source-Organization": conf.site_name(), "External-Description": PACKAGE_TITLE}


def table_row_counts() -> dict[str, int]:
    """How many rows each table will have: the build's progress is measured against these."""
    return {
        PROTOCOL_COVERAGE.name: m.Protocol.objects.count(),
        MODEL_EVALUATION_MATRIX.name: m.Result.objects.count(),
        SOURCE_TABLE.name: m.Source.objects.count(),
        EVIDENCE.name: m.EvidenceRow.objects.count(),
    }
