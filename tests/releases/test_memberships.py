"""A release's memberships stored while its export runs (releases.memberships), and the export's second
process (releases.forked, releases.export_pass): what they store and publish is what the one-thread,
one-process build stored and published."""

from __future__ import annotations

import datetime
import os
import threading
import time
from pathlib import Path
from unittest import mock

import pytest
from django.db import connection

from releases import export_pass as export_pass_module
from releases import exporter, memberships, selectors
from releases.build import release_build
from releases.bundle import BundleError
from releases.export_pass import export_pass
from releases.forked import ForkedCall, may_fork
from releases.lifecycle import BuildFailed, BuildSuperseded
from releases.memberships import MembershipWriter, memberships_discard, memberships_insert
from releases.models import Release, ReleaseRecord, ReleaseStatus
from releases.services import release_cut

DATE = datetime.date(2026, 11, 1)


@pytest.fixture(autouse=True)
def fork_beside_the_test_sessions_threads(settings):
    """A whole test session runs threads of its own (the live server's, idle between tests): these
    tests fork whatever runs beside them (RELEASE_BUILD_FORK "always"), except where they say."""
    settings.RELEASE_BUILD_FORK = "always"


def building(token: str = "claim-a", **fields) -> Release:
    return Release.objects.create(
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
    writer = MembershipWriter(release_pk=release.pk, token="claim-a", previous=None, threaded=False)
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
    writer = MembershipWriter(release_pk=release.pk, token="claim-a", previous=None, threaded=False)
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
    Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.FAILED)
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
    Release.objects.filter(pk=release.pk).update(build_token="taken-over")
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


def _write_mine(release: Release, previous: Release, *, threaded: bool) -> MembershipWriter:
    writer = MembershipWriter(release_pk=release.pk, token="claim-a", previous=previous, threaded=threaded)
    for record_type, stable_id, digest in MINE:
        writer.add(record_type, stable_id, digest)
    writer.close()
    return writer


@pytest.mark.django_db
def test_the_batches_comparisons_give_the_change_counts_of_the_change_lists(monkeypatch) -> None:
    monkeypatch.setattr(memberships, "BATCH", 2)
    previous = _previous_release()
    mine = building()
    writer = _write_mine(mine, previous, threaded=False)
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
    writer = _write_mine(mine, previous, threaded=False)
    newer = building(token="")
    assert writer.changes(release=mine, previous=newer, format_version=2) is None


@pytest.mark.django_db(transaction=True)
def test_on_its_own_thread_the_writer_stores_and_compares_the_same() -> None:
    previous = _previous_release()
    mine = building()
    writer = _write_mine(mine, previous, threaded=True)
    assert stored(mine) == sorted(MINE)
    assert writer.matches == selectors.membership_matches(release_pk=mine.pk, previous_pk=previous.pk)


@pytest.mark.django_db(transaction=True)
def test_an_error_on_the_storing_thread_reaches_the_export_and_nothing_after_it_is_stored(monkeypatch) -> None:
    monkeypatch.setattr(memberships, "BATCH", 2)
    release = building()
    writer = MembershipWriter(release_pk=release.pk, token="claim-a", previous=None, threaded=True)
    writer.add_many("result", ["r1", "r1"], ["a", "b"])  # a batch the database would refuse
    with pytest.raises(BuildFailed, match="exported twice"):
        for n in range(100):
            writer.add("protocol", f"p{n}", "x")
            time.sleep(0.01)
        writer.close()
    writer.abandon()
    assert stored(release) == []


# ---------------------------------------------------------------- the second process


def test_a_forked_call_returns_the_childs_result_and_raises_its_errors_as_themselves() -> None:
    assert ForkedCall(lambda send: {"pid": os.getpid(), "n": [1, 2]}).result()["n"] == [1, 2]
    assert ForkedCall(lambda send: os.getpid()).result() != os.getpid()

    def bad_row(send):
        raise BundleError("required value is empty", table="evidence", primary_key=("e1",), field="quote")

    with pytest.raises(BundleError) as refused:
        ForkedCall(bad_row).result()
    assert str(refused.value) == "table 'evidence', primary key ('e1',), field 'quote': required value is empty"
    with pytest.raises(BuildFailed, match=r"^ZeroDivisionError: division by zero$"):
        ForkedCall(lambda send: 1 / 0).result()


def test_a_forked_call_sends_its_messages_before_its_result_and_its_error_ends_the_wait() -> None:
    def work(send):
        send(1)
        send(["two", None])
        return 3

    call = ForkedCall(work)
    assert call.receive() == 1 and call.receive() == ["two", None] and call.result() == 3

    def fails_before_sending(send):
        raise BuildSuperseded()

    call = ForkedCall(fails_before_sending)
    with pytest.raises(BuildSuperseded):
        call.receive()
    with pytest.raises(BuildSuperseded):
        call.result()


def test_a_cancelled_forked_call_leaves_no_process() -> None:
    call = ForkedCall(lambda send: time.sleep(60))
    pid = call.pid
    call.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_no_child_is_forked_beside_another_thread_nor_when_the_setting_says_never(settings) -> None:
    settings.RELEASE_BUILD_FORK = "never"
    assert not may_fork()
    settings.RELEASE_BUILD_FORK = "auto"
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not may_fork()
        with pytest.raises(RuntimeError):
            ForkedCall(lambda send: None)
    finally:
        stop.set()
        other.join()


@pytest.mark.django_db(transaction=True)
def test_a_forked_child_reads_with_a_connection_of_its_own_and_leaves_the_parents_working() -> None:
    building(token="")
    connection.ensure_connection()
    inherited = connection.connection
    assert may_fork()
    in_child = ForkedCall(lambda send: [Release.objects.count(), id(connection.connection) != id(inherited)]).result()
    assert in_child == [1, True]
    assert connection.connection is inherited and Release.objects.count() == 1
    building(token="")  # and the parent still writes
    assert Release.objects.count() == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("child_results", [False, True])
def test_the_export_in_two_processes_writes_and_stores_what_one_process_does(
    seeded, releases_dir, tmp_path, monkeypatch, child_results
) -> None:
    from tests.factories import EvaluationFactory, ResultFactory

    for _ in range(4):
        ResultFactory(evaluation=EvaluationFactory())
    if child_results:  # the child takes the last fifth of the results too (SQLite reads them in key order)
        monkeypatch.setattr(export_pass_module, "SPLIT_FROM_RESULTS", 1)
    release = building(token="claim-a")
    forks = []
    with mock.patch("releases.export_pass.ForkedCall", side_effect=lambda work: forks.append(1) or ForkedCall(work)):
        result, writer = export_pass(
            release=release,
            token="claim-a",
            previous=None,
            output=tmp_path / "two",
            folder=tmp_path / "other-tables",
            chunk_size=3,
            progress=None,
        )
    assert forks == [1]

    class Sink:
        added: list[tuple[str, str, str]] = []

        def add(self, record_type, stable_id, digest):
            self.added.append((record_type, stable_id, digest))

        def add_many(self, record_type, stable_ids, digests):
            self.added.extend((record_type, i, d) for i, d in zip(stable_ids, digests, strict=True))

    sink = Sink()
    plain = exporter.bundle_write(output_dir=tmp_path / "one", release_date=DATE, chunk_size=3, memberships=sink)
    for record in exporter.derived_memberships(chunk_size=3):
        sink.add(*record)
    assert result.release_id == plain.release_id and result.row_counts == plain.row_counts
    one, two = (
        {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
        for root in (tmp_path / "one", tmp_path / "two")
    )
    assert one == two
    assert stored(release) == sorted(sink.added)
    assert writer.count == len(sink.added) and sum(writer.by_type().values()) == writer.count
    split = child_results and connection.vendor == "sqlite"
    assert (tmp_path / "other-tables" / export_pass_module.RESULTS_TEXT).exists() == split


def test_text_written_elsewhere_follows_the_rows_in_the_one_stream_and_in_key_order(tmp_path: Path) -> None:
    from releases.bundle import KeyOrdered, RowsThenText, write_csv_text_file, write_table_file
    from tests.releases.bundle_data import RESULTS, result_rows

    rows = sorted(result_rows(), key=lambda r: tuple(r[n] for n in RESULTS.primary_key))
    rows = [{**row, "value": row["value"] if not isinstance(row["value"], int) else None} for row in rows]
    whole, _ = write_table_file(
        tmp_path / "whole.csv.gz", RESULTS, KeyOrdered(rows), chunk_rows=2, progress=None, spill_dir=tmp_path
    )
    count, first = write_csv_text_file(tmp_path / "tail.csv", RESULTS, KeyOrdered(rows[3:]), chunk_rows=2)
    assert count == len(rows) - 3 and first == tuple(rows[3][n] for n in RESULTS.primary_key)
    joined = RowsThenText(rows=KeyOrdered(rows[:3]), wait=lambda: (tmp_path / "tail.csv", count, first))
    (tmp_path / "joined").mkdir()
    info, written = write_table_file(
        tmp_path / "joined" / "whole.csv.gz", RESULTS, joined, chunk_rows=2, progress=None, spill_dir=tmp_path
    )
    assert written == len(rows) and (info.sha256, info.bytes) == (whole.sha256, whole.bytes)
    assert (tmp_path / "joined" / "whole.csv.gz").read_bytes() == (tmp_path / "whole.csv.gz").read_bytes()
    overlapping = RowsThenText(rows=KeyOrdered(rows[:4]), wait=lambda: (tmp_path / "tail.csv", count, first))
    with pytest.raises(BundleError, match="do not follow"):
        write_table_file(tmp_path / "bad.csv.gz", RESULTS, overlapping, chunk_rows=2, progress=None, spill_dir=tmp_path)


@pytest.mark.django_db(transaction=True)
def test_a_bad_row_in_the_other_process_fails_the_build_with_its_message(seeded, releases_dir, release_manager):
    real = exporter.source_rows

    def sources_without_titles(*, chunk_size):
        for row in real(chunk_size=chunk_size):
            yield {**row, "title": ""}

    release = release_cut(actor=release_manager)
    forks = []
    with (
        mock.patch("releases.exporter.source_rows", sources_without_titles),  # the child inherits it
        mock.patch("releases.export_pass.ForkedCall", side_effect=lambda work: forks.append(1) or ForkedCall(work)),
    ):
        failed = release_build(release_pk=release.pk)
    assert forks == [1]
    assert failed.status == ReleaseStatus.FAILED
    assert "table 'source_table'" in failed.error and "required value is empty" in failed.error
    assert not failed.records.exists()
    assert not list(Path(releases_dir).glob("**/other-tables"))
