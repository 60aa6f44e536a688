"""The release build's fast paths give what the plain ones gave, byte for byte: the column-wise codec,
key-ordered rows streamed without the external sort, the threaded gzip writer, the digest encoder,
and SQLite's insert guard lifted only inside a transaction (memberships: test_memberships.py)."""

from __future__ import annotations

import csv
import datetime
import gzip
import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection, transaction

from releases import catalogue_rows, db_triggers
from releases.bundle import BundleError, ColumnChunks, KeyOrdered, read_csv_rows
from releases.bundle import bag as bag_module
from releases.bundle.bag import gzip_stream, hashed_file, write_gzip_csv
from releases.bundle.order import promised_in_key_order
from releases.bundle.table_format import BundleDialect, RowCodec
from tests.factories import release_with_build
from tests.releases.bundle_data import MODELS, RESULTS, SOURCES, build, model_rows, result_rows, source_rows


def all_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def key_ordered(tables):
    return [
        (spec, KeyOrdered(sorted(rows, key=lambda r, s=spec: tuple(r[n] for n in s.primary_key))))
        for spec, rows in tables
    ]


def tables():
    return [(SOURCES, source_rows()), (MODELS, model_rows()), (RESULTS, result_rows())]


# ---------------------------------------------------------------- the codec


@pytest.mark.backend_independent
@pytest.mark.parametrize(
    "rows",
    [
        result_rows(),  # ints among the decimals: the batch goes row by row
        [row for row in result_rows() if not isinstance(row["value"], int)],  # all column-wise
        source_rows(),
        [{**row, "value": Decimal("-0.00"), "checked": None} for row in result_rows()[:7]],
    ],
)
def test_the_column_wise_codec_gives_the_cells_of_the_row_by_row_one(rows) -> None:
    spec = RESULTS if "replicate" in rows[0] else SOURCES
    codec = RowCodec(spec)
    assert [list(cells) for cells in codec.cells_many(rows)] == [codec.cells(row) for row in rows]


@pytest.mark.backend_independent
def test_a_bad_value_in_a_batch_raises_the_row_by_row_error() -> None:
    rows = [row for row in result_rows() if not isinstance(row["value"], int)]
    rows[3] = {**rows[3], "task": "pro\x00moter"}
    codec = RowCodec(RESULTS)
    with pytest.raises(BundleError) as raised:
        codec.cells_many(rows)
    assert raised.value.field == "task" and raised.value.primary_key == tuple(rows[3][n] for n in RESULTS.primary_key)


# ---------------------------------------------------- key-ordered rows, gzip


@pytest.mark.backend_independent
@pytest.mark.parametrize("chunk_rows", [1, 7, 10_000])
def test_key_ordered_rows_give_the_bundle_the_external_sort_gives(tmp_path: Path, chunk_rows: int) -> None:
    sorted_here = build(tmp_path / "sorted", [(spec, rows[::-1]) for spec, rows in tables()], chunk_rows=chunk_rows)
    streamed = build(tmp_path / "streamed", key_ordered(tables()), chunk_rows=chunk_rows)
    assert streamed.release_id == sorted_here.release_id
    assert all_files(streamed.bag_dir) == all_files(sorted_here.bag_dir)
    assert streamed.tarball.read_bytes() == sorted_here.tarball.read_bytes()


@pytest.mark.backend_independent
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rows: rows.insert(3, rows.pop(7)), "not"),
        (lambda rows: rows.insert(4, dict(rows[3])), "duplicate primary key"),
    ],
)
def test_key_ordered_rows_out_of_order_or_repeated_are_refused(tmp_path: Path, change, message: str) -> None:
    rows = sorted(source_rows(), key=lambda r: r["source_id"])
    change(rows)
    with pytest.raises(BundleError) as raised:
        build(tmp_path, [(SOURCES, KeyOrdered(rows)), (MODELS, model_rows()), (RESULTS, [])], chunk_rows=3)
    assert message in str(raised.value) and raised.value.table == "sources"
    assert list(tmp_path.iterdir()) == [], "nothing may be left behind"


@pytest.mark.backend_independent
@pytest.mark.parametrize("block", [1, 100, 1 << 18])
def test_the_threaded_gzip_writer_gives_the_bytes_of_a_plain_gzip_text_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    codec = RowCodec(RESULTS)
    rows = [codec.cells(row) for row in result_rows()] * 40
    header = [f.name for f in RESULTS.fields]
    with hashed_file(tmp_path / "plain.csv.gz") as sink:  # how every earlier release wrote its tables
        with io.TextIOWrapper(gzip_stream(sink), encoding="utf-8", newline="") as text:
            writer = csv.writer(text, dialect=BundleDialect)
            writer.writerow(header)
            writer.writerows(rows)
    plain = sink.info("data/x.csv.gz")
    monkeypatch.setattr(bag_module, "CSV_BLOCK_CHARACTERS", block)
    threaded, count = write_gzip_csv(tmp_path / "threaded.csv.gz", "data/x.csv.gz", header, iter(rows))
    assert count == len(rows) and threaded == plain
    assert (tmp_path / "threaded.csv.gz").read_bytes() == (tmp_path / "plain.csv.gz").read_bytes()
    with gzip.open(tmp_path / "threaded.csv.gz", "rt", encoding="utf-8", newline="") as stream:
        assert [list(r) for r in read_csv_rows(stream)] == [header, *rows]


@pytest.mark.backend_independent
def test_a_row_error_while_writing_stops_the_compressing_thread(tmp_path: Path) -> None:
    def rows():
        yield ["a"] * len(RESULTS.fields)
        raise BundleError("bad row")

    with pytest.raises(BundleError, match="bad row"):
        write_gzip_csv(tmp_path / "t.csv.gz", "data/t.csv.gz", ["h"], rows())


# ------------------------------------------------------------------ digests


@pytest.mark.backend_independent
@pytest.mark.parametrize(
    "values",
    [
        ["id-1", None, "", True, False, 0, -3, Decimal("0.410"), Decimal("-0"), Decimal("3.00E+11")],
        ("tuple", datetime.date(2026, 1, 2), 'quote " and \\ and \n and \u2028 and 基因组 🧬', "\x7f\x01"),
        [],
    ],
)
def test_the_digest_encoder_writes_the_text_json_dumps_writes(values) -> None:
    expected = json.dumps(
        list(values), default=catalogue_rows._json_value, ensure_ascii=False, separators=(",", ":")
    )  # what every earlier release hashed
    assert catalogue_rows.digest_text(values) == expected


# ---------------------------------------------------------------- memberships


@pytest.mark.django_db(transaction=True)
def test_the_insert_guard_is_lifted_only_inside_a_transaction_and_comes_back() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("only SQLite's guard is lifted")
    table = "releases_releaserecord"
    triggers = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name = %s"
    with pytest.raises(RuntimeError), db_triggers.inserts_unguarded_in_this_transaction(connection, table):
        pass
    with transaction.atomic(), db_triggers.inserts_unguarded_in_this_transaction(connection, table):
        with connection.cursor() as cursor:
            cursor.execute(triggers, [f"{table}_no_insert"])
            assert cursor.fetchall() == []
    with connection.cursor() as cursor:
        cursor.execute(triggers, [f"{table}_no_insert"])
        assert cursor.fetchall() == [(f"{table}_no_insert",)]


@pytest.mark.django_db
def test_the_catalogue_rows_promise_key_order_only_where_the_database_gives_code_point_order() -> None:
    ordered = {spec.name: promised_in_key_order(rows) for spec, rows in catalogue_rows.bundle_tables(chunk_size=10)}
    derived = {"agreements", "agreement_measurements"}  # computed a task family at a time: always sorted
    assert {ordered[name] for name in ordered.keys() - derived} == {connection.vendor == "sqlite"}
    assert {ordered[name] for name in derived} == {False}


# ------------------------------------------------------- rows as columns


def as_columns(spec, rows, size):
    names = [f.name for f in spec.fields]
    return ColumnChunks(
        ({name: [row[name] for row in rows[i : i + size]] for name in names} for i in range(0, len(rows), size)),
        key_ordered=False,
    )


@pytest.mark.backend_independent
@pytest.mark.parametrize("rows", [result_rows(), [r for r in result_rows() if not isinstance(r["value"], int)]])
def test_columns_give_the_cells_rows_give(rows) -> None:
    codec = RowCodec(RESULTS)
    columns = {f.name: [row[f.name] for row in rows] for f in RESULTS.fields}
    assert [list(c) for c in codec.cells_of_columns(columns)] == [list(c) for c in codec.cells_many(rows)]


@pytest.mark.backend_independent
def test_columns_of_unequal_length_or_a_bad_value_are_refused_as_rows_are() -> None:
    codec = RowCodec(SOURCES)
    rows = source_rows()
    columns = {f.name: [row[f.name] for row in rows] for f in SOURCES.fields}
    with pytest.raises(BundleError, match="unequal length"):
        codec.cells_of_columns({**columns, "title": columns["title"][1:]})
    columns["kind"] = [*columns["kind"][:2], "poster", *columns["kind"][3:]]
    with pytest.raises(BundleError) as raised:
        codec.cells_of_columns(columns)
    assert raised.value.field == "kind" and raised.value.primary_key == (rows[2]["source_id"],)


@pytest.mark.backend_independent
@pytest.mark.parametrize("chunk_rows", [1, 7, 10_000])
def test_column_chunks_give_the_bundle_rows_give(tmp_path: Path, chunk_rows: int) -> None:
    as_rows = build(tmp_path / "rows", [(spec, rows[::-1]) for spec, rows in tables()], chunk_rows=chunk_rows)
    sorted_tables = key_ordered(tables())
    in_order = [(spec, ColumnChunks(as_columns(spec, list(rows), 5), key_ordered=True)) for spec, rows in sorted_tables]
    unordered = [(spec, as_columns(spec, rows[::-1], 4)) for spec, rows in tables()]
    for name, given in (("in-order", in_order), ("unordered", unordered)):
        written = build(tmp_path / name, given, chunk_rows=chunk_rows)
        assert written.release_id == as_rows.release_id
        assert all_files(written.bag_dir) == all_files(as_rows.bag_dir)


@pytest.mark.backend_independent
def test_column_chunks_promised_in_order_but_not_are_refused(tmp_path: Path) -> None:
    rows = sorted(source_rows(), key=lambda r: r["source_id"])
    rows.insert(3, rows.pop(7))
    given = ColumnChunks(as_columns(SOURCES, rows, 4), key_ordered=True)
    with pytest.raises(BundleError, match="not") as raised:
        build(tmp_path, [(SOURCES, given), (MODELS, model_rows()), (RESULTS, [])], chunk_rows=3)
    assert raised.value.table == "sources"


# ------------------------------------------------ the release's matrix


class Memberships:
    def __init__(self) -> None:
        self.added: list[tuple[str, str, str]] = []

    def add(self, record_type: str, stable_id: str, content_sha256: str) -> None:
        self.added.append((record_type, stable_id, content_sha256))

    def add_many(self, record_type: str, stable_ids, digests) -> None:
        self.added += [(record_type, i, d) for i, d in zip(stable_ids, digests, strict=True)]


@pytest.mark.django_db
@pytest.mark.parametrize("chunk_size", [1, 3, 1_000])
def test_the_release_matrix_gives_the_rows_and_digests_of_the_plain_join(chunk_size: int) -> None:
    from records import exports
    from records.models import GenomicModel, MeasuredBy, Result
    from releases import matrix
    from releases.table_schemas import MODEL_EVALUATION_MATRIX
    from tests.factories import EvaluationFactory, ResultFactory
    from tests.helpers import apply_transitions

    original = EvaluationFactory(uncertainty="± 0.01", setup="5-fold")
    apply_transitions(original, "check_source")
    repeat = EvaluationFactory(repeats=original, measured_by=MeasuredBy.THIRD_PARTY, measured_by_name="Lab")
    original.configuration.model = GenomicModel.objects.create(stable_id="a-model", name="A model")
    original.configuration.save()
    copy = EvaluationFactory(original_citation="A leaderboard", original_locator="row 3")
    for i, evaluation in enumerate([original, repeat, copy, original]):
        ResultFactory(evaluation=evaluation, value=Decimal(("0.410", "3.00E+11", "-0.00", "7")[i]), num_runs=i or None)
    ResultFactory(evaluation=repeat, value=Decimal("0.5"), lower_bound=Decimal("0.40"), uncertainty_kind="ci")
    key = catalogue_rows._key()
    sink = Memberships()
    rows = list(matrix.matrix_rows(chunk_size=chunk_size, key=key, sink=sink))
    plain = list(exports.matrix_rows(Result.objects.all(), chunk_size=chunk_size, key=key))
    names = [f.name for f in MODEL_EVALUATION_MATRIX.fields]
    release_only = list(matrix.RELEASE_ONLY_COLUMNS)
    assert [{n: r[n] for n in r if n not in release_only} for r in rows] == plain and len(rows) == 5
    assert set(names) == set(plain[0]) | set(release_only)
    joined = {  # the release's own columns, read by a plain join
        values[0]: dict(zip(release_only, values[1:], strict=True))
        for values in Result.objects.values_list("stable_id", *matrix.RELEASE_ONLY_COLUMNS.values())
    }
    assert all({n: r[n] for n in release_only} == joined[r["result_id"]] for r in rows)
    assert {r["model_name"] for r in rows} == {"A model", None} and {r["original_locator"] for r in rows} == {
        "row 3",
        "",
    }
    assert sink.added == [
        ("result", r["result_id"], catalogue_rows.content_digest([r[n] for n in names])) for r in rows
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("previous_format", [2, 1])
def test_the_change_counts_are_those_of_the_change_lists(previous_format: int) -> None:
    from releases import selectors
    from releases.models import ReleaseRecord, ReleaseStatus

    def release(counts, records):
        made = release_with_build(release_date=datetime.date(2026, 1, 1), status=ReleaseStatus.BUILDING, counts=counts)
        ReleaseRecord.objects.bulk_create(
            ReleaseRecord(release=made, record_type=t, stable_id=i, content_sha256=d) for t, i, d in records
        )
        return made

    previous = release(
        {"format_version": previous_format},
        [
            ("result", "r1", "a"),
            ("result", "r2", "b"),
            ("result", "r3", "c"),
            ("protocol", "p1", "x"),
            ("source", "s1", "y"),
        ],
    )
    mine = release(
        {"format_version": 2},
        [
            ("result", "r1", "a"),
            ("result", "r2", "B"),
            ("result", "r4", "d"),
            ("protocol", "p1", "x"),
            ("evaluation", "e1", "z"),
        ],
    )
    lists = selectors._change_querysets(release=mine, previous=previous, format_version=2)
    expected = dict(zip(("added", "removed", "changed"), map(selectors.records_by_type, lists), strict=True))
    assert selectors.membership_changes(release=mine, previous=previous, format_version=2) == expected
    assert expected["removed"] == {"result": 1, "source": 1}
    assert expected["changed"] == ({"result": 1} if previous_format == 2 else {})
    first = selectors.membership_changes(release=previous, previous=None)
    assert first == {"added": {"protocol": 1, "result": 3, "source": 1}, "removed": {}, "changed": {}}


# ------------------------------------------------ memory


def test_the_bundle_writer_holds_at_most_a_chunk_of_rows_in_memory(db, tmp_path: Path) -> None:
    import tracemalloc

    from records.models import Relation, Result
    from tests.factories import EvaluationFactory, ProtocolFactory

    protocol = ProtocolFactory()
    evaluation = EvaluationFactory(protocol=protocol, quote="q" * 2000)
    # Ratios to a reference: no agreement counts them (only absolute results compare), whose reading
    # holds a subject's evidence on a task family at once (tests/releases/test_identity_tables.py).
    Result.objects.bulk_create(
        Result(
            evaluation=evaluation,
            stable_id=f"r-{i:05d}",
            value=Decimal(i),
            unit="minute",
            printed_value="x" * 190,
            relation=Relation.RATIO,
            reference_configuration=evaluation.configuration,
        )
        for i in range(3000)
    )  # about 7 MB of matrix text: each row repeats the evaluation's quote

    def peak(chunk: int) -> int:
        tracemalloc.start()
        try:
            catalogue_rows.bundle_write(
                output_dir=tmp_path / f"c{chunk}", release_date=datetime.date(2026, 11, 1), chunk_size=chunk
            )
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    # Measured: about 2 MB with chunks of 100 rows, over 10 MB with the whole table in one chunk.
    assert peak(100) < 4_000_000
