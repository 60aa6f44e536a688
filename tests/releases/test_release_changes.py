"""What a release says changed since the one before it: the change counts by record type, and
metadata/changes.csv row by row, as a data user reads it."""

from __future__ import annotations

import csv

import pytest

from records.models import Configuration, Result
from records.services import record_save
from releases.build import release_build
from releases.models import ReleaseStatus
from releases.selectors import latest_published
from releases.services import release_cut
from releases.store import release_directory
from tests.factories import SourceFactory

pytestmark = pytest.mark.django_db


def bag_of(release):
    return release_directory(release.release_id) / release.release_id


def test_the_change_from_the_previous_release_counts_records_added_removed_and_changed(
    seeded, releases_dir, release_manager, curator
):
    lonely = SourceFactory(stable_id="a-source-nobody-cites")
    first = release_build(release_pk=release_cut(actor=release_manager).pk)
    assert first.status == ReleaseStatus.PUBLISHED, first.build.error
    assert first.previous.is_external  # the seed's release came first

    lonely.delete()
    SourceFactory(stable_id="a-new-source")
    configuration = Configuration.objects.get(stable_id="nt-500m-ia3-dalla-torre-2025")
    configuration.name = "NT 500M, renamed"
    record_save(record=configuration, actor=curator, changed_fields=["name"])
    second = release_build(release_pk=release_cut(actor=release_manager).pk)

    assert second.status == ReleaseStatus.PUBLISHED, second.build.error
    assert second.previous == first
    assert second.counts["added"] == {"source": 1}
    assert second.counts["removed"] == {"source": 1}
    assert second.counts["changed"] == {"configuration": 1, "result": 1}
    assert latest_published() == second

    # metadata/changes.csv names each row, against the last release this portal built
    assert (first.counts["changes_against"], second.counts["changes_against"]) == (None, first.release_id)
    with (bag_of(second) / "metadata" / "changes.csv").open(encoding="utf-8", newline="") as handle:
        listed = {(row["table"], row["key"]): (row["change"], row["fields"]) for row in csv.DictReader(handle)}
    assert listed[("source_table", "a-source-nobody-cites")] == ("removed", "")
    assert listed[("source_table", "a-new-source")] == ("added", "")
    assert listed[("configuration_table", "nt-500m-ia3-dalla-torre-2025")] == ("changed", "name")
    changed_results = {key for (table, key), (change, _) in listed.items() if table == "model_evaluation_matrix"}
    assert changed_results == set(
        Result.objects.filter(evaluation__configuration=configuration).values_list("stable_id", flat=True)
    )
    with (bag_of(first) / "metadata" / "changes.csv").open(encoding="utf-8", newline="") as handle:
        assert {row["change"] for row in csv.DictReader(handle)} == {"added"}  # no release before it was built here
