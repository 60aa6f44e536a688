"""The bundle writer's tables: their Frictionless descriptors, values in their fixed forms, the
CSV dialect, and the rows and specs it refuses (test_bundle.py checks the bag as a whole)."""

from __future__ import annotations

import datetime
import gzip
import io
import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from releases.bundle import (
    BundleError,
    BundleResult,
    Field,
    ForeignKey,
    TableSpec,
    read_csv_rows,
    serialise_decimal,
    write_bundle,
    write_csv_rows,
)
from tests.releases.bundle_data import RELEASE_DATE, RESULTS, Row, build, rows_in_order

pytestmark = pytest.mark.backend_independent


# ------------------------------------------------------------------ datapackage


def test_datapackage_describes_each_table_with_schema_size_and_hash(bundle: BundleResult) -> None:
    package = json.loads((bundle.bag_dir / "data" / "datapackage.json").read_text(encoding="utf-8"))
    resources = {r["name"]: r for r in package["resources"]}
    infos = {f.name: f for f in bundle.payload_files}
    assert list(resources) == ["sources", "models", "results", "release"]
    for resource in resources.values():
        info = infos[f"data/{resource['path']}"]
        assert (resource["bytes"], resource["hash"]) == (info.bytes, f"sha256:{info.sha256}")
    results = resources["results"]
    assert [results[k] for k in ("path", "compression", "encoding", "format")] == [
        "results.csv.gz",
        "gz",
        "utf-8",
        "csv",
    ]
    assert results["dialect"]["lineTerminator"] == "\r\n" and results["dialect"]["header"] is True
    fields = {f["name"]: f for f in results["schema"]["fields"]}
    assert fields["replicate"] == {"name": "replicate", "type": "integer", "constraints": {"required": True}}
    assert fields["state"]["constraints"]["enum"] == ["reported", "reproduced", "disputed"]
    assert "constraints" not in fields["value"]
    assert results["schema"]["primaryKey"] == ["source_id", "model_id", "task", "replicate"]
    assert results["schema"]["foreignKeys"][0] == {
        "fields": ["source_id"],
        "reference": {"resource": "sources", "fields": ["source_id"]},
    }


# ------------------------------------------------------------------------- CSV


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (Decimal("0.7340"), "0.7340"),
        (Decimal("1E+3"), "1E+3"),
        (Decimal("3.00E+11"), "3.00E+11"),
        (Decimal("20"), "20"),
        (Decimal("-0"), "0"),
        (Decimal("-0.000"), "0.000"),
        (Decimal("1.50E-7"), "1.50E-7"),
        (Decimal("12345678901234567890.123456789012345678900"), "12345678901234567890.123456789012345678900"),
    ],
)
def test_decimals_are_written_with_exactly_their_recorded_digits(value: Decimal, written: str) -> None:
    assert serialise_decimal(value) == written


def test_values_are_written_in_their_fixed_forms(bundle: BundleResult) -> None:
    with gzip.open(bundle.bag_dir / "data" / "results.csv.gz", "rt", encoding="utf-8", newline="") as stream:
        header, *rows = list(read_csv_rows(stream))
    by_replicate = {int(r[header.index("replicate")]): dict(zip(header, r, strict=True)) for r in rows}
    assert [by_replicate[i]["value"] for i in range(6)] == ["0.7340", "1E+3", "20", "0", "", "3"]
    assert [by_replicate[i]["checked"] for i in range(3)] == ["true", "false", ""]
    assert by_replicate[1]["reported_on"] == "2024-02-02"
    assert by_replicate[0]["reported_on"] == ""


def test_the_dialect_is_rfc_4180_with_minimal_quoting() -> None:
    stream = io.StringIO(newline="")
    write_csv_rows(stream, [["a", "b,c", 'd"e', "f\ng", " h "], [""]])
    assert stream.getvalue() == 'a,"b,c","d""e","f\ng", h \r\n""\r\n'


def test_the_tables_are_utf8_without_bom(bundle: BundleResult) -> None:
    content = gzip.decompress((bundle.bag_dir / "data" / "sources.csv.gz").read_bytes())
    assert content.startswith(b"source_id,title,kind,year\r\n")
    assert "Ünïcødé 基因组 🧬".encode() in content


cell_text = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), st.sampled_from(',"\r\n')
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(cell_text, min_size=1, max_size=6), max_size=8))
def test_any_text_round_trips_through_the_csv_writer_and_reader(rows: list[list[str]]) -> None:
    stream = io.StringIO(newline="")
    write_csv_rows(stream, rows)
    assert list(read_csv_rows(io.StringIO(stream.getvalue(), newline=""))) == rows


# ------------------------------------------------------------------- validation


def with_change(change: Callable[[list[Row]], None]) -> tuple[list[tuple[TableSpec, list[Row]]], tuple[object, ...]]:
    """The rows with one result changed, and that result's primary key after the change."""
    tables = rows_in_order(list)
    results = tables[2][1]
    change(results)
    return tables, tuple(results[5][name] for name in RESULTS.primary_key)


def set_value(field: str, value: object) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        rows[5][field] = value

    return change


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (set_value("state", None), "state", "required value is empty"),
        (set_value("task", ""), "task", "required value is empty"),
        (set_value("metric", "f1"), "metric", "is not one of"),
        (set_value("replicate", "5"), "replicate", "expected an integer"),
        (set_value("replicate", True), "replicate", "expected an integer"),
        (set_value("value", 1.5j), "value", "expected a number"),
        (set_value("task", "pro\x00moter"), "task", "NUL"),
        (set_value("reported_on", datetime.datetime(2024, 1, 1)), "reported_on", "expected a date"),
        (set_value("surprise", 1), "surprise", "unknown field"),
        (lambda rows: rows[5].pop("checked"), "checked", "missing field"),
        (lambda rows: rows.append(dict(rows[5])), "source_id,model_id,task,replicate", "duplicate primary key"),
    ],
)
def test_invalid_rows_are_refused_naming_table_key_and_field(
    tmp_path: Path, change: Callable[[list[Row]], None], field: str, message: str
) -> None:
    tables, key = with_change(change)
    with pytest.raises(BundleError) as raised:
        build(tmp_path, tables, chunk_rows=4)

    error = raised.value
    assert (error.table, error.primary_key, error.field) == ("results", key, field)
    assert message in str(error) and "'results'" in str(error) and repr(field) in str(error)
    assert list(tmp_path.iterdir()) == [], "nothing may be left behind"


@pytest.mark.parametrize(
    "spec",
    [
        TableSpec("bad", "", "", (Field("n", "number"),), ("n",)),
        TableSpec("bad", "", "", (Field("n", "integer", enum=("1",)),), ("n",)),
        TableSpec("bad", "", "", (Field("n", "text"),), ("n",)),
        TableSpec("Bad Name", "", "", (Field("n", "integer"),), ("n",)),
        TableSpec("bad", "", "", (Field("n", "integer"),), ("n",), (ForeignKey(("n",), "nowhere", ("n",)),)),
    ],
)
def test_unusable_specs_are_refused_before_writing(tmp_path: Path, spec: TableSpec) -> None:
    with pytest.raises(BundleError):
        build(tmp_path, [(spec, [])])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("metadata", "message"),
    [({"release_id": "x"}, "release_id"), ({"release_date": "2025-03-14"}, "release_date"), ({"x": {1, 2}}, "JSON")],
)
def test_release_metadata_may_not_carry_the_release_id_or_date(
    tmp_path: Path, metadata: dict[str, object], message: str
) -> None:
    with pytest.raises(BundleError, match=message):
        write_bundle(
            tables=rows_in_order(list),
            release_date=RELEASE_DATE,
            release_metadata=metadata,
            package_name="p",
            package_title="P",
            output_dir=tmp_path,
        )
    assert list(tmp_path.iterdir()) == []
