"""A release's memberships stored while its export runs (releases.memberships), a batch at a time:
what a build stores and publishes is what its export reports, and the batches' comparisons with the
previous release give the change lists' counts."""

from __future__ import annotations

import datetime
from pathlib import Path
from unittest import mock

import pytest

from releases import catalogue_rows, memberships, selectors
from releases.build import release_build
from releases.lifecycle import BuildFailed, BuildSuperseded
from releases.memberships import MembershipWriter, memberships_discard, memberships_insert
from releases.models import Release, ReleaseBuild, ReleaseRecord, ReleaseStatus
from releases.services import release_cut
from tests.factories import release_with_build

DATE = datetime.date(2026, 11, 1)


def building(token: str = "claim-a", **fields) -> Release:
    return release_with_build(
        release_date=DATE, status=ReleaseStatus.BUILDING, build_token=token, counts={"format_version": 2}, **fields
    )


def stored(release: Release) -> list[tuple[str, str, str]]:
    return sorted(
        ReleaseRecord.objects.filter(release=release).values_list("record_type", "stable_id", "content_sha256")
    )


PREVIOUS = [("result", "r1", "a"), ("result", "r2", "b"), ("result", "r3", "c"), ("protocol", "p1", "x")]
MINE = [("result", "r1", "a"), ("result", "r2", "B"), ("result", "r4", "d"), ("protocol", "p1", "x")]
MINE += [("evaluation", "e1", "z"), ("evaluation", "e2", 'é, "quoted"')]


# ---------------------------------------------------------------- storing


@pytest.mark.django_db
def test_the_writer_stores_every_membership_a_batch_at_a_time_and_counts_them_by_type(monkeypatch) -> None:
    monkeypatch.setattr(memberships, "BATCH", 2)
    release = building()
    writer = MembershipWriter(release_pk=release.pk, token="claim-a", previous=None)
    writer.add_many("result", ["r1", "r2", "r4"], ["a", "B", "d"])
    writer.add("protocol", "p1", "x")
    writer.add("evaluation", "e1", "z")
    writer.add_many("evaluation", ["e2"], ['é, "quoted"'])
    writer.close()
    assert stored(release) == sorted(MINE)
    assert writer.by_type() == {"evaluation": 2, "protocol": 1, "result": 3} and writer.count == 6


@pytest.mark.django_db
def test_a_record_type_coming_in_two_runs_or_twice_in_a_batch_is_refused() -> None:
    release = building()
    writer = MembershipWriter(release_pk=release.pk, token="claim-a", previous=None)
    writer.add("result", "r1", "a")
    writer.add("protocol", "p1", "x")
    with pytest.raises(BuildFailed, match="result came in two runs"):
        writer.add("result", "r2", "b")
    with pytest.raises(BuildFailed, match="exported twice"):
        memberships_insert(
            release_pk=release.pk, token="claim-a", record_type="source", stable_ids=["s", "s"], digests=["1", "2"]
        )


@pytest.mark.django_db
def test_a_batch_for_a_build_no_longer_this_claims_stores_nothing() -> None:
    release = building(token="claim-b")
    with pytest.raises(BuildSuperseded):
        memberships_insert(
            release_pk=release.pk, token="claim-a", record_type="result", stable_ids=["r1"], digests=["a"]
        )
    ReleaseBuild.objects.filter(pk=release.pk).update(status=ReleaseStatus.FAILED)
    with pytest.raises(BuildSuperseded):
        memberships_insert(
            release_pk=release.pk, token="claim-b", record_type="result", stable_ids=["r1"], digests=["a"]
        )
    assert stored(release) == []


@pytest.mark.django_db
def test_a_new_claim_removes_what_the_lost_worker_stored_and_the_lost_worker_cannot() -> None:
    release = building(token="lost")
    memberships_insert(
        release_pk=release.pk, token="lost", record_type="result", stable_ids=["r1", "r2"], digests=["a", "b"]
    )
    ReleaseBuild.objects.filter(pk=release.pk).update(build_token="taken-over")
    with pytest.raises(BuildSuperseded):
        memberships_discard(release_pk=release.pk, token="lost")
    assert memberships_discard(release_pk=release.pk, token="taken-over") == 2
    assert stored(release) == []


# ---------------------------------------------------------------- comparing


def _previous_release() -> Release:
    previous = building(token="")
    ReleaseRecord.objects.bulk_create(
        ReleaseRecord(release=previous, record_type=t, stable_id=i, content_sha256=d) for t, i, d in PREVIOUS
    )
    return previous


def _write_mine(release: Release, previous: Release) -> MembershipWriter:
    writer = MembershipWriter(release_pk=release.pk, token="claim-a", previous=previous)
    for record_type, stable_id, digest in MINE:
        writer.add(record_type, stable_id, digest)
    writer.close()
    return writer


@pytest.mark.django_db
def test_the_batches_comparisons_give_the_change_counts_of_the_change_lists(monkeypatch) -> None:
    monkeypatch.setattr(memberships, "BATCH", 2)
    previous = _previous_release()
    mine = building()
    writer = _write_mine(mine, previous)
    lists = selectors._change_querysets(release=mine, previous=previous, format_version=2)
    expected = dict(zip(("added", "removed", "changed"), map(selectors.records_by_type, lists), strict=True))
    assert writer.changes(release=mine, previous=previous, format_version=2) == expected
    assert selectors.membership_changes(release=mine, previous=previous, format_version=2) == expected
    assert expected == {"added": {"evaluation": 2, "result": 1}, "removed": {"result": 1}, "changed": {"result": 1}}
    assert writer.matches == selectors.membership_matches(release_pk=mine.pk, previous_pk=previous.pk)


@pytest.mark.django_db
def test_counts_against_another_previous_release_are_not_offered() -> None:
    previous = _previous_release()
    mine = building()
    writer = _write_mine(mine, previous)
    newer = building(token="")
    assert writer.changes(release=mine, previous=newer, format_version=2) is None


@pytest.mark.django_db
def test_a_batch_the_database_would_refuse_stops_the_export_where_it_comes(monkeypatch) -> None:
    monkeypatch.setattr(memberships, "BATCH", 2)
    release = building()
    writer = MembershipWriter(release_pk=release.pk, token="claim-a", previous=None)
    writer.add("protocol", "p1", "x")
    with pytest.raises(BuildFailed, match="exported twice"):
        writer.add_many("result", ["r1", "r1"], ["a", "b"])
    # The batches before it stay stored (failing the release removes them); none of the refused one.
    assert stored(release) == [("protocol", "p1", "x")]


# ---------------------------------------------------------------- the build


class Sink:
    """A membership sink that only collects what the export reports."""

    def __init__(self) -> None:
        self.added: list[tuple[str, str, str]] = []

    def add(self, record_type, stable_id, digest):
        self.added.append((record_type, stable_id, digest))

    def add_many(self, record_type, stable_ids, digests):
        self.added.extend((record_type, i, d) for i, d in zip(stable_ids, digests, strict=True))


@pytest.mark.django_db(transaction=True)
def test_a_build_stores_and_publishes_exactly_the_memberships_its_export_reports(
    seeded, releases_dir, release_manager, tmp_path, monkeypatch
) -> None:
    from releases.store import release_directory
    from tests.factories import EvaluationFactory, ResultFactory

    for _ in range(4):
        ResultFactory(evaluation=EvaluationFactory())
    monkeypatch.setattr(memberships, "BATCH", 3)  # several batches of one type, and types that end mid-batch
    release = release_build(release_pk=release_cut(actor=release_manager).pk)
    assert release.status == ReleaseStatus.PUBLISHED, release.build.error

    sink = Sink()
    plain = catalogue_rows.bundle_write(
        output_dir=tmp_path / "plain", release_date=release.release_date, chunk_size=3, memberships=sink
    )
    for record in catalogue_rows.derived_memberships(chunk_size=3):
        sink.add(*record)
    assert stored(release) == sorted(sink.added)
    assert release.counts["records"] == selectors.records_by_type(ReleaseRecord.objects.filter(release=release))
    assert sum(release.counts["records"].values()) == len(sink.added)
    assert plain.release_id == release.release_id and plain.row_counts == release.counts["rows"]
    built = release_directory(release.release_id) / release.release_id / "data"
    assert {p.name: p.read_bytes() for p in built.iterdir()} == {
        p.name: p.read_bytes() for p in (plain.bag_dir / "data").iterdir()
    }


@pytest.mark.django_db(transaction=True)
def test_a_bad_row_fails_the_build_with_its_message_and_leaves_no_membership(
    seeded, releases_dir, release_manager
) -> None:
    real = catalogue_rows.source_rows

    def sources_without_titles(*, chunk_size):
        for row in real(chunk_size=chunk_size):
            yield {**row, "title": ""}

    release = release_cut(actor=release_manager)
    with mock.patch("releases.catalogue_rows.source_rows", sources_without_titles):
        failed = release_build(release_pk=release.pk)
    assert failed.status == ReleaseStatus.FAILED
    assert "table 'source_table'" in failed.build.error and "required value is empty" in failed.build.error
    assert not failed.records.exists()
    assert not [p for p in Path(releases_dir).rglob("*") if p.is_file()]
