"""The release build's fast paths give what the plain ones gave, byte for byte: the column-wise codec,
key-ordered rows streamed without the external sort, the threaded gzip writer, the digest encoder,
and memberships inserted by one executemany with SQLite's insert guard lifted only inside it."""

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

from releases import db_triggers, exporter
from releases.bundle import BundleError, KeyOrdered, read_csv_rows
from releases.bundle import bag as bag_module
from releases.bundle.bag import gzip_stream, hashed_file, write_gzip_csv
from releases.bundle.tables import BundleDialect, RowCodec
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
        list(values), default=exporter._json_value, ensure_ascii=False, separators=(",", ":")
    )  # what every earlier release hashed
    assert exporter.digest_text(values) == expected


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
def test_the_exporter_promises_key_order_only_where_the_database_gives_code_point_order() -> None:
    ordered = [isinstance(rows, KeyOrdered) for _spec, rows in exporter.bundle_tables(chunk_size=10)]
    assert set(ordered) == {connection.vendor == "sqlite"}
