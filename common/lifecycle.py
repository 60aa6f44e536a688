"""One lifecycle for long work (release builds, benchmark jobs): docs/architecture/design-map.md, "Apps".

The row is the truth, a Celery message only a nudge to look at it. Each kind of long work keeps
its own statuses, but they all move the same way:

- a `TransitionTable`: the statuses, the legal moves between them (as data, each with a name), which
  statuses are terminal (nothing leaves them) and which are "working" (a worker holds a claim);
- `Lifecycle.change`: one status change of a row the caller has locked, inside the caller's
  transaction, checked against the table and written together with one event row;
- `Lifecycle.claim`: a worker takes the row by one conditional UPDATE (WHERE status and attempt
  are still what it read, and whatever else the caller names) and learns from the row count
  whether it won; an event row is written with it;
- `Lifecycle.heartbeat`: one conditional UPDATE of the heartbeat (and progress) that also tells the
  worker whether it still holds the claim; not a status change, no lock held across the run;
- `Lifecycle.sweep`: each candidate row locked in its own transaction and handed to the app's
  decision (which moves it by `change`); one row that raises is logged and the others are swept.

Generic over the model: the app passes its model classes and field names. No app is imported here
(common is the bottom layer).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from common.errors import Conflict, DomainError
from common.types import Actor

logger = logging.getLogger(__name__)

#: The "from" status of a row being created.
NEW = ""

Row = TypeVar("Row", bound=models.Model)


class TransitionRefused(Conflict):
    """A status change the table does not list (the default refusal; an app may name its own)."""

    default_field = "status"


@dataclass(frozen=True)
class TransitionTable:
    """The statuses of one kind of long work and the moves allowed between them, as data.

    `moves` maps (from, to) to the move's name; `NEW` ("") as the from status is a row being created.
    A move from a status to itself (a message sent again, a stale claim taken over) is still a move:
    it is listed, named and audited like any other. `terminal` statuses are never left; `working`
    ones are those in which a worker holds a claim (its heartbeat counts only there).
    """

    states: tuple[str, ...]
    moves: Mapping[tuple[str, str], str]
    terminal: frozenset[str]
    working: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        known = set(self.states)
        for source, target in self.moves:
            if (source != NEW and source not in known) or target not in known:
                raise ValueError(f"move {source!r} -> {target!r} names a status the table does not have")
            if source in self.terminal:
                raise ValueError(f"{source!r} is terminal: no move may leave it")
        if not self.terminal <= known or not self.working <= known or self.terminal & self.working:
            raise ValueError("terminal and working statuses must be distinct statuses of the table")

    def allows(self, source: str, target: str) -> bool:
        return (source, target) in self.moves

    def move_name(self, source: str, target: str) -> str | None:
        """The name of the move from `source` to `target`, or None when the table does not list it."""
        return self.moves.get((source, target))

    @property
    def unfinished(self) -> tuple[str, ...]:
        """The statuses that are not terminal, in the table's order."""
        return tuple(state for state in self.states if state not in self.terminal)


def duration_setting(name: str, default_seconds: float) -> timedelta:
    """A duration setting given in seconds (`<APP>_STALE_AFTER_SECONDS`, ...), with its default."""
    return timedelta(seconds=float(getattr(settings, name, default_seconds)))


class Lifecycle(Generic[Row]):
    """How rows of `model` move by `table`, with one `event_model` row per status change.

    The event model has a foreign key `event_row_field` to the row (or to a row with its primary key)
    and the fields `from_status`,
    `to_status`, `attempt`, `actor` and `reason`; `event_fields(actor)` adds the app's own (such as
    the role the actor acted in). `claim_field` is what identifies the claim a worker holds: the
    attempt number itself, or a token set by the claim. Refusals raise `refused(message, field="status")`.

    A plain class, not a frozen one: a test may replace `locked` on an instance.
    """

    def __init__(
        self,
        *,
        model: type[Row],
        table: TransitionTable,
        event_model: type[models.Model],
        event_row_field: str,
        label: str,
        status_field: str = "status",
        attempts_field: str = "attempts",
        claim_field: str = "attempts",
        heartbeat_field: str = "heartbeat_at",
        started_field: str = "started_at",
        event_fields: Callable[[Actor], Mapping[str, Any]] | None = None,
        refused: type[DomainError] = TransitionRefused,
    ) -> None:
        self.model = model
        self.table = table
        self.event_model = event_model
        self.event_row_field = event_row_field
        self.label = label
        self.status_field = status_field
        self.attempts_field = attempts_field
        self.claim_field = claim_field
        self.heartbeat_field = heartbeat_field
        self.started_field = started_field
        self.event_fields = event_fields
        self.refused = refused

    # --- reading ----------------------------------------------------------------------------------

    def locked(self, pk: Any) -> Row | None:
        """The row, locked until the caller's transaction ends (`SELECT ... FOR UPDATE`; on SQLite the
        IMMEDIATE transaction already holds the write lock); None when there is no such row."""
        return self.model._default_manager.select_for_update().filter(pk=pk).first()

    def status_of(self, row: Row) -> str:
        return NEW if row._state.adding else str(getattr(row, self.status_field))

    def stale_before(self, cutoff: datetime) -> Q:
        """Rows whose last sign of life (heartbeat, else start) is older than `cutoff`, or which have none."""
        heartbeat, started = self.heartbeat_field, self.started_field
        no_beat_since = Q(**{f"{heartbeat}__isnull": True}) & (
            Q(**{f"{started}__isnull": True}) | Q(**{f"{started}__lt": cutoff})
        )
        return Q(**{f"{heartbeat}__lt": cutoff}) | no_beat_since

    def is_stale(self, row: Row, *, now: datetime, stale_after: timedelta) -> bool:
        """Whether the row's last sign of life (heartbeat, else start) is older than `stale_after`, or missing."""
        beat = getattr(row, self.heartbeat_field) or getattr(row, self.started_field, None)
        return beat is None or beat < now - stale_after

    # --- writing ----------------------------------------------------------------------------------

    def _refuse(self, row: Row, source: str, target: str) -> DomainError:
        return self.refused(f"{self.label} {row.pk} is {source or 'new'}: it cannot become {target}", field="status")

    def record_event(self, *, row: Row, from_status: str, actor: Actor = None, reason: str = "") -> models.Model:
        """The event row of a status change just made to `row` (locked, or new) in this transaction."""
        extra = dict(self.event_fields(actor)) if self.event_fields else {}
        return self.event_model._default_manager.create(
            **{f"{self.event_row_field}_id": row.pk},
            from_status=from_status,
            to_status=getattr(row, self.status_field),
            attempt=getattr(row, self.attempts_field),
            actor=actor,
            reason=reason,
            **extra,
        )

    def change(self, *, row: Row, to: str, actor: Actor = None, reason: str = "", **fields: Any) -> models.Model:
        """Apply one status change to a row the caller has locked (or is creating), inside the caller's
        transaction: checked against the table, the status and `fields` saved, one event row written.

        Only the status and `fields` are written to an existing row; a new row is inserted whole.
        """
        assert transaction.get_connection().in_atomic_block, "status changes run inside transaction.atomic()"
        source = self.status_of(row)
        if not self.table.allows(source, to):
            raise self._refuse(row, source, to)
        for name, value in fields.items():
            setattr(row, name, value)
        setattr(row, self.status_field, to)
        if source == NEW:
            row.save()
        else:
            row.save(update_fields=[self.status_field, *fields])
        return self.record_event(row=row, from_status=source, actor=actor, reason=reason)

    def claim(
        self,
        *,
        row: Row,
        to: str,
        reason: str,
        actor: Actor = None,
        match: Mapping[str, Any] | Q | None = None,
        now: datetime | None = None,
        **fields: Any,
    ) -> bool:
        """Take `row` (as the caller read it) for a worker: one conditional UPDATE, inside the caller's
        transaction, that succeeds only while the row's status and attempt count are what the caller
        read and `match` still holds (the message the row names, a stale heartbeat, ...).

        The winner's row becomes `to` with one more attempt, its start and heartbeat set to `now` and
        `fields` written; `row` is updated in memory and one event row is written. Returns False,
        writing nothing, when another worker (or a cancel, or the sweeper) changed the row meanwhile.
        `fields` are plain values (no expressions): they are also set on `row`.
        """
        assert transaction.get_connection().in_atomic_block, "claims run inside transaction.atomic()"
        source = self.status_of(row)
        if not self.table.allows(source, to):
            raise self._refuse(row, source, to)
        now = now or timezone.now()
        attempt = getattr(row, self.attempts_field) + 1
        values = {
            self.status_field: to,
            self.attempts_field: attempt,
            self.started_field: now,
            self.heartbeat_field: now,
            **fields,
        }
        still = {self.status_field: source, self.attempts_field: attempt - 1}
        condition = match if isinstance(match, Q) else Q(**(match or {}))
        updated = self.model._default_manager.filter(condition, pk=row.pk, **still).update(**values)
        if updated != 1:
            return False
        for name, value in values.items():
            setattr(row, name, value)
        self.record_event(row=row, from_status=source, actor=actor, reason=reason)
        return True

    def heartbeat(self, *, pk: Any, claim: Any, now: datetime | None = None, **fields: Any) -> bool:
        """Write the heartbeat (and `fields`, such as progress) while the row is working under this claim.

        One conditional UPDATE, no lock held across the run. False when the row is no longer this
        claim's (cancelled, finished, or taken over after a lost heartbeat): the worker should stop.
        """
        holding = {f"{self.status_field}__in": self.table.working, self.claim_field: claim}
        values = {self.heartbeat_field: now or timezone.now(), **fields}
        return self.model._default_manager.filter(pk=pk, **holding).update(**values) == 1

    # --- the sweeper ------------------------------------------------------------------------------

    def sweep(
        self, *, statuses: Iterable[str], visit: Callable[[Row], str | None], where: Q | None = None
    ) -> dict[str, list[Any]]:
        """Visit every row in `statuses` (that also matches `where`), in primary key order.

        Each row is locked in its own transaction and, if it is still in one of `statuses`, handed to
        `visit`, which moves it by `change` (or leaves it) and names the outcome ("requeued",
        "failed", ...; None: left alone). Returns the rows by outcome. A row whose visit raises is
        rolled back, logged and skipped: one bad row must not stop the sweep of the others.
        """
        statuses = tuple(statuses)
        candidates = self.model._default_manager.filter(**{f"{self.status_field}__in": statuses})
        if where is not None:
            candidates = candidates.filter(where)
        outcomes: dict[str, list[Any]] = {}
        for pk in list(candidates.order_by("pk").values_list("pk", flat=True)):
            try:
                with transaction.atomic():
                    row = self.locked(pk)
                    if row is None or getattr(row, self.status_field) not in statuses:
                        continue
                    outcome = visit(row)
            except Exception:
                logger.exception("%s %s could not be swept", self.label, pk)
                continue
            if outcome:
                outcomes.setdefault(outcome, []).append(pk)
        return outcomes


@dataclass
class SweepReport:
    """What one sweep did: the ids whose message it sent again, requeued for another attempt, failed."""

    resent: list[int] = field(default_factory=list)
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[int]]:
        return {"resent": self.resent, "requeued": self.requeued, "failed": self.failed}
