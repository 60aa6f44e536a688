"""Synthetic tables for the bundle writer's tests: three specs with foreign keys between them, rows
whose ids sort differently as text and as numbers, titles that need quoting, decimals with
trailing zeros and exponents; `build` writes them as a bundle."""

from __future__ import annotations

import datetime
import shutil
import stat
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from releases.bundle import BundleResult, Field, ForeignKey, TableSpec, write_bundle

RELEASE_DATE = datetime.date(2025, 3, 14)
Row = dict[str, object]

SOURCES = TableSpec(
    name="sources",
    title="Sources",
    description="Papers and preprints that report results.",
    fields=(
        Field("source_id", "string", title="Source id", required=True),
        Field("title", "string", required=True),
        Field("kind", "string", required=True, enum=("paper", "preprint")),
        Field("year", "integer"),
    ),
    primary_key=("source_id",),
)
MODELS = TableSpec(
    name="models",
    title="Models",
    description="Genomic foundation models.",
    fields=(
        Field("model_id", "string", required=True),
        Field("parameters", "integer"),
    ),
    primary_key=("model_id",),
)
RESULTS = TableSpec(
    name="results",
    title="Results",
    description="One reported metric of one model on one task.",
    fields=(
        Field("source_id", "string", required=True),
        Field("model_id", "string", required=True),
        Field("task", "string", required=True),
        Field("replicate", "integer", required=True),
        Field("metric", "string", required=True, enum=("mcc", "auroc")),
        Field("value", "number"),
        Field("state", "string", required=True, enum=("reported", "reproduced", "disputed")),
        Field("checked", "boolean"),
        Field("reported_on", "date"),
    ),
    primary_key=("source_id", "model_id", "task", "replicate"),
    foreign_keys=(
        ForeignKey(("source_id",), "sources", ("source_id",)),
        ForeignKey(("model_id",), "models", ("model_id",)),
    ),
)
DATA_FILES = ("sources.csv.gz", "models.csv.gz", "results.csv.gz", "release.json")


def source_rows() -> list[Row]:
    """Ids sort differently as text and as numbers; titles need quoting."""
    titles = [
        "Plain",
        "Comma, inside",
        'Quote "inside"',
        "Line\r\nbreak",
        "Lone\rreturn",
        "Ünïcødé 基因组 🧬",
        " padded ",
        "Line\u2028separator",
    ]
    return [
        {
            "source_id": f"src-{i}",
            "title": titles[i % len(titles)],
            "kind": ("paper", "preprint")[i % 2],
            "year": 2020 + i % 5 if i % 4 else None,
        }
        for i in range(12)
    ]


def model_rows() -> list[Row]:
    return [{"model_id": f"model-{i}", "parameters": 10**i if i else None} for i in range(4)]


def result_rows() -> list[Row]:
    return [
        {
            "source_id": f"src-{i % 12}",
            "model_id": f"model-{i % 4}",
            "task": ("promoter", "splice site", "enhancer, human")[i % 3],
            "replicate": i,
            "metric": ("mcc", "auroc")[i % 2],
            "value": (Decimal("0.7340"), Decimal("1E+3"), Decimal("20"), Decimal("-0"), None, 3)[i % 6],
            "state": ("reported", "reproduced", "disputed")[i % 3],
            "checked": (True, False, None)[i % 3],
            "reported_on": datetime.date(2024, 1 + i % 12, 1 + i % 28) if i % 5 else None,
        }
        for i in range(50)
    ]


def rows_in_order(order: Callable[[list[Row]], list[Row]]) -> list[tuple[TableSpec, list[Row]]]:
    return [(SOURCES, order(source_rows())), (MODELS, order(model_rows())), (RESULTS, order(result_rows()))]


def build(output_dir: Path, tables: list[tuple[TableSpec, list[Row]]] | None = None, **options: object) -> BundleResult:
    return write_bundle(
        tables=tables if tables is not None else rows_in_order(list),
        release_date=RELEASE_DATE,
        release_metadata={"title": "Test release", "notes": ["first", "second"], "threshold": Decimal("0.50")},
        package_name="gfm-benchmark-evidence",
        package_title="Benchmark evidence",
        output_dir=output_dir,
        bag_info_extra={"Source-Organization": "Test lab"},
        **options,  # type: ignore[arg-type]
    )


def all_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def writable_copy(bag_dir: Path, destination: Path) -> Path:
    """A copy of a (read-only) bag that a test may damage."""
    shutil.copytree(bag_dir, destination)
    for path in [destination, *destination.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return destination
