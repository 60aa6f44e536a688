"""The docs' one-liners keep a release's values exact: pandas reading `value` as text (then decimals)
and DuckDB reading it as VARCHAR give back every value as the source printed it, where pandas' own
guess (float64) loses the trailing digits. On a release built by the portal's build path."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pandas as pd
import pytest

from tests.factories import EvaluationFactory, ResultFactory
from tests.releases.conftest import build_now, published_release, release_manager, releases_dir  # noqa: F401

# Reading the files answers the same on every backend: CI runs this in one pass only.
pytestmark = [pytest.mark.django_db, pytest.mark.backend_independent]

PRINTED = ["0.910", "0.410", "3.00E+11", "12.50", "-0.0300"]


@pytest.fixture
def printed_values(seeded):
    evaluation = EvaluationFactory()
    for number, value in enumerate(PRINTED):
        ResultFactory(
            stable_id=f"{evaluation.stable_id}-r{number}",
            evaluation=evaluation,
            value=Decimal(value),
            printed_value=value,
        )
    return PRINTED


def test_the_documented_readers_keep_every_value_as_printed(printed_values, published_release, releases_dir):  # noqa: F811
    [matrix] = releases_dir.rglob("model_evaluation_matrix.csv.gz")
    written = pd.read_csv(matrix, dtype=str)["value"].tolist()  # every column as text: the file as written
    assert set(printed_values) <= set(written)

    exact = pd.read_csv(matrix, dtype={"value": str})  # the docs' pandas line
    assert exact["value"].tolist() == written
    assert [str(value) for value in exact["value"].map(Decimal)] == written

    guessed = pd.read_csv(matrix)["value"]  # pandas' own guess: float64, digits lost
    assert guessed.dtype == "float64" and "0.910" not in [repr(value) for value in guessed]

    # The docs' DuckDB line: the bundle's dialect named (its sniffer took the seed's quotes for another)
    table = f"""read_csv('{matrix}', header=true, delim=',', quote='"', escape='"', types={{'value': 'VARCHAR'}})"""
    assert [row[0] for row in duckdb.sql(f"select value from {table}").fetchall()] == written
