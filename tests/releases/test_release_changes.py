"""What a release says changed since the one before it: the change counts by record type, and
metadata/changes.csv row by row, as a data user reads it."""

from __future__ import annotations

import csv

import pytest

from records.models import Configuration, Result
from records.services import record_save
from releases.build import release_build
from releases.catalogue_rows import RECORD_TYPES
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

    # metadata/changes.csv names each row, against the previous release
    assert (first.counts["changes_against"], second.counts["changes_against"]) == (
        first.previous.release_id,
        first.release_id,
    )
    with (bag_of(second) / "metadata" / "changes.csv").open(encoding="utf-8", newline="") as handle:
        listed = {(row["table"], row["key"]): (row["change"], row["fields"]) for row in csv.DictReader(handle)}
    assert listed[("source_table", "a-source-nobody-cites")] == ("removed", "")
    assert listed[("source_table", "a-new-source")] == ("added", "")
    assert listed[("configuration_table", "nt-500m-ia3-dalla-torre-2025")] == ("changed", "name")
    changed_results = {key for (table, key), (change, _) in listed.items() if table == "model_evaluation_matrix"}
    assert changed_results == set(
        Result.objects.filter(evaluation__configuration=configuration).values_list("stable_id", flat=True)
    )


def test_the_first_cut_after_a_release_published_elsewhere_counts_what_it_held_and_lists_no_row(
    seeded, releases_dir, release_manager
):
    first = release_build(release_pk=release_cut(actor=release_manager).pk)
    seed_release = first.previous
    assert seed_release.is_external
    held = {(r.record_type, r.stable_id) for r in seed_release.records.filter(record_type__in=RECORD_TYPES)}
    mine = {(r.record_type, r.stable_id) for r in first.records.all()}
    assert held and held <= mine
    assert first.added_total == len(mine - held)  # what the previous release held is not added
    assert first.counts["changed"] == {}  # its records carry no digests: changes unknown, said on the page
    with (bag_of(first) / "metadata" / "changes.csv").open(encoding="utf-8", newline="") as handle:
        assert list(csv.DictReader(handle)) == []  # no row marked added: its rows cannot be compared
    package = (bag_of(first) / "metadata" / "datapackage.json").read_text(encoding="utf-8")
    assert f"Release {seed_release.release_id} came before; its files are not held here" in package
