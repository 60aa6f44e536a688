"""A release's memberships, stored while its export runs, batch by batch, not in the publishing
transaction.

Every record a release exports is one `ReleaseRecord` (type, stable id, sha256 of its exported values).
The export hands them over as the tables stream past (`MembershipWriter.add` / `add_many`, a chunk of
results at a time); the writer gathers them by record type and stores each batch of `BATCH` in a
transaction of its own (`memberships_insert`: one set-based INSERT of the whole batch, the release
row locked and checked to be still building under this claim's token), then compares the batch with
the previous release (one statement: how many it holds too, how many of those with another digest;
the sums are `releases.selectors.membership_matches`' figures). Both run through the export's
`releases.snapshot.Writes`, beside its read transaction: memory holds one batch, whatever N.

Memberships of a release that is not published are nobody's to read (every reader asks for
published releases), so storing them before publication changes nothing anyone sees. What is left
of them is removed: by the next export pass or the next claim (`memberships_discard`, under the lock
and the new token) and when the release fails (`releases.lifecycle.release_fail_locked`). The
publishing transaction checks that exactly the exported number is stored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from django.db import connection, transaction

from releases import db_triggers, selectors
from releases.lifecycle import BUILDING, RELEASES, BuildFailed, BuildSuperseded
from releases.models import Release, ReleaseBuild, ReleaseRecord
from releases.selectors import Matches
from releases.snapshot import Writes

BATCH = 10_000  # memberships per INSERT (one transaction each)


# ------------------------------------------------------------------ storing


def _locked_building(release_pk: int, token: str) -> ReleaseBuild:
    """The release's build, locked, if it is still building under `token`; else BuildSuperseded."""
    build = RELEASES.locked(release_pk)
    if build is None or build.status != BUILDING or build.build_token != token:
        raise BuildSuperseded()
    return build


def _statements() -> tuple[str, str]:
    """The batch's INSERT and its comparison with another release, each one statement for the whole
    batch: the stable ids and digests travel as one JSON object (SQLite's `json_each`) or as two
    arrays (PostgreSQL's `unnest`), never as a statement per row."""
    meta = ReleaseRecord._meta
    quote = connection.ops.quote_name
    column = {field.name: quote(field.column) for field in meta.concrete_fields}
    table = quote(meta.db_table)
    release, record_type, stable_id, digest = (
        column[name] for name in ("release", "record_type", "stable_id", "content_sha256")
    )
    if connection.vendor == "postgresql":
        batch, ids, digests = "unnest(%s::text[], %s::text[]) AS b(stable_id, digest)", "b.stable_id", "b.digest"
        changed, join = f"COUNT(*) FILTER (WHERE p.{digest} <> {digests})", "JOIN"
    else:  # CROSS JOIN: SQLite's planner would otherwise scan the table and the batch inside it
        batch, ids, digests = "json_each(%s) AS b", "b.key", "b.value"
        changed, join = f"COALESCE(SUM(p.{digest} <> {digests}), 0)", "CROSS JOIN"
    insert = (
        f"INSERT INTO {table} ({release}, {record_type}, {stable_id}, {digest}) "
        f"SELECT %s, %s, {ids}, {digests} FROM {batch}"
    )
    compare = (
        f"SELECT COUNT(p.{stable_id}), {changed} FROM {batch} {join} {table} p "
        f"ON p.{release} = %s AND p.{record_type} = %s AND p.{stable_id} = {ids}"
    )
    return insert, compare


def memberships_insert(
    *,
    release_pk: int,
    token: str,
    record_type: str,
    stable_ids: Sequence[str],
    digests: Sequence[str],
    previous_pk: int | None = None,
) -> tuple[int, int]:
    """Store one batch of memberships of `record_type`, if the build is still this claim's; then, given
    `previous_pk`, how many of them that release holds too and how many of those with another digest.

    On SQLite the per-row guard against inserting into a published release is lifted for the
    insert's transaction only (`db_triggers.inserts_unguarded_in_this_transaction`): the transaction
    holds the one write lock and has just checked that the release is building.
    """
    pairs = dict(zip(stable_ids, digests, strict=True))
    if len(pairs) != len(stable_ids):
        raise BuildFailed(f"a {record_type} was exported twice")
    if connection.vendor == "postgresql":
        batch: list[list[str] | str] = [list(stable_ids), list(digests)]
    else:
        batch = [json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))]
    insert, compare = _statements()
    with transaction.atomic():
        release = _locked_building(release_pk, token)
        with (
            db_triggers.inserts_unguarded_in_this_transaction(connection, ReleaseRecord._meta.db_table),
            connection.cursor() as cursor,
        ):
            cursor.execute(insert, [release.pk, record_type, *batch])
    if previous_pk is None:
        return 0, 0
    with connection.cursor() as cursor:
        cursor.execute(compare, [*batch, previous_pk, record_type])
        kept, changed = cursor.fetchone()
    return kept, changed


def memberships_discard(*, release_pk: int, token: str) -> int:
    """Remove the memberships stored for the release (a lost worker's, or an export pass's that was
    discarded), if the build is this claim's; how many."""
    with transaction.atomic():
        _locked_building(release_pk, token)
        deleted, _ = ReleaseRecord.objects.filter(release_id=release_pk).delete()
    return deleted


# ------------------------------------------------------------------ the writer


class MembershipWriter:
    """The export's membership sink (`releases.matrix.MembershipSink`): counts the memberships by
    type, stores them a batch at a time, and compares each batch with `previous`.

    A record type must come in one run (the tables are written one after another); `close` stores
    what is left.
    """

    def __init__(self, *, release_pk: int, token: str, previous: Release | None, writes: Writes | None = None) -> None:
        self.release_pk = release_pk
        self.writes = writes or Writes(consistent=False)
        self.token = token
        self.previous = previous
        self.counts: dict[str, int] = {}
        self.count = 0
        self.matches: Matches = {}
        self._type: str | None = None
        self._ids: list[str] = []
        self._digests: list[str] = []

    def add(self, record_type: str, stable_id: str, content_sha256: str) -> None:
        """One record: the tables other than the results' come row by row (74,000 rows at 100,000
        results), so this appends without making lists of one for `add_many`."""
        if record_type != self._type:
            self._start(record_type)
        self._ids.append(stable_id)
        self._digests.append(content_sha256)
        self.counts[record_type] += 1
        self.count += 1
        if len(self._ids) >= BATCH:
            self._store()

    def add_many(self, record_type: str, stable_ids: Sequence[str], digests: Sequence[str]) -> None:
        """`add` of many records of one type."""
        if not stable_ids:
            return
        if record_type != self._type:
            self._start(record_type)
        self._ids += stable_ids
        self._digests += digests
        self.counts[record_type] += len(stable_ids)
        self.count += len(stable_ids)
        if len(self._ids) >= BATCH:
            self._store()

    def by_type(self) -> dict[str, int]:
        """How many memberships of each record type (what `selectors.records_by_type` counts in the table)."""
        return dict(sorted(self.counts.items()))

    def close(self) -> None:
        """Store what is left (what was stored stays, if the export fails, for the next claim, pass or
        failure to remove)."""
        self._end_type()

    def changes(
        self, *, release: Release, previous: Release | None, format_version: int
    ) -> dict[str, dict[str, int]] | None:
        """The change counts against `previous` from the batches compared as they were stored; None when
        `previous` is not the release they were compared with (one was published meanwhile)."""
        if (previous and previous.pk) != (self.previous and self.previous.pk):
            return None
        return selectors.membership_changes(
            release=release, previous=previous, format_version=format_version, matches=self.matches
        )

    # ------------------------------------------------------------ inside

    def _start(self, record_type: str) -> None:
        self._end_type()
        if record_type in self.counts:
            raise BuildFailed(f"the memberships of type {record_type} came in two runs")
        self._type = record_type
        self.counts[record_type] = 0

    def _count_in(self, record_type: str, figures: tuple[int, int, int]) -> None:
        """Add (memberships, kept, changed) to `record_type`'s comparison with `previous`."""
        self.matches[record_type] = tuple(  # type: ignore[assignment]
            total + more for total, more in zip(self.matches.get(record_type, (0, 0, 0)), figures, strict=True)
        )

    def _end_type(self) -> None:
        if self._type is not None:
            self._store()
            self._type = None

    def _store(self) -> None:
        """Store the batch gathered so far, and count it into this type's comparison with `previous`."""
        if not self._ids:
            return
        record_type, stable_ids, digests = str(self._type), self._ids, self._digests
        self._ids, self._digests = [], []
        previous_pk = None if self.previous is None else self.previous.pk
        kept, changed = self.writes.call(
            memberships_insert,
            release_pk=self.release_pk,
            token=self.token,
            record_type=record_type,
            stable_ids=stable_ids,
            digests=digests,
            previous_pk=previous_pk,
        )
        if previous_pk is not None:
            self._count_in(record_type, (len(stable_ids), kept, changed))
