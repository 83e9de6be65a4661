"""DjangoJournal: the runtime's Journal protocol on the database (SQLite or PostgreSQL).

A batch append is one transaction: the expected-version check and the inserts commit together
or not at all. Appending event ids that are already stored is a retry whose answer was lost:
it writes nothing and returns the original records.

Positions must become visible in order: a reader that has seen position P must never later
find a new event below P, or a projector reading by position would skip it forever. On SQLite
there is one writer at a time (transactions begin IMMEDIATE). On PostgreSQL, sequence values
are handed out at insert time but become visible at commit, so two concurrent appends could
commit out of order; every append therefore takes one transaction-level advisory lock first,
which makes appends (and so positions) commit one after the other.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, connections, transaction
from django.db.models import Max

from journal_store.models import StoredEvent
from runtime.events import Event, event_fields, parse_event
from runtime.journal import Recorded, WrongExpectedVersion, check_batch, replayed_batch

APPEND_LOCK = 0x4D696E75746573  # "Minutes": the advisory lock that serializes appends
ENVELOPE = ("kind", "v", "id", "t", "run_id", "agent", "turn", "task_id")
COLUMNS = (
    "position",
    "event_id",
    "stream",
    "version",
    "run_id",
    "kind",
    "v",
    "agent",
    "task_id",
    "turn",
    "data",
    "t",
)


def to_row(event: Event, stream: str, version: int) -> StoredEvent:
    body = event_fields(event)
    data = json.dumps(
        {k: v for k, v in body.items() if k not in ENVELOPE},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return StoredEvent(
        event_id=uuid.UUID(hex=event.id),
        stream=stream,
        version=version,
        run_id=event.run_id,
        kind=event.kind,
        v=event.v,
        agent=event.agent,
        task_id=event.task_id,
        turn=event.turn,
        data=data,
        t=event.t,
        recorded_at=datetime.fromtimestamp(event.t, tz=UTC),
    )


def from_values(row: Sequence[Any]) -> Recorded:
    """A Recorded from a values_list row in COLUMNS order; old versions are upcast here."""
    (
        position,
        event_id,
        stream,
        version,
        run_id,
        kind,
        v,
        agent,
        task_id,
        turn,
        data,
        t,
    ) = row
    body = json.loads(data)
    body.update(kind=kind, v=v, id=event_id.hex, t=t, run_id=run_id)
    if agent is not None:
        body["agent"] = agent
    if task_id is not None:
        body["task_id"] = task_id
    if turn is not None:
        body["turn"] = turn
    return Recorded(stream, version, position, parse_event(body))


def records(rows: Iterable[Sequence[Any]]) -> list[Recorded]:
    return [from_values(row) for row in rows]


class DjangoJournal:
    """A Journal on one of Django's database connections (`using`)."""

    def __init__(self, using: str = "default") -> None:
        self.using = using

    @property
    def postgres(self) -> bool:
        return connections[self.using].vendor == "postgresql"

    def serialize_appends(self) -> None:
        """Inside a transaction: wait until no other append is in flight (see module doc)."""
        if self.postgres:
            with connections[self.using].cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [APPEND_LOCK])

    def append(self, stream: str, events: Sequence[Event], expected_version: int) -> list[Recorded]:
        check_batch(stream, events, expected_version)
        try:
            with transaction.atomic(using=self.using):
                self.serialize_appends()
                return self._append_locked(stream, events, expected_version)
        except IntegrityError as exc:
            # The unique (stream, version) constraint is the last line of defence: somebody
            # got there first by a path that did not take the lock.
            if "journal_stream_version" in str(exc) or "stream" in str(exc):
                raise WrongExpectedVersion(stream, expected_version, self.version(stream)) from None
            raise

    def _append_locked(
        self, stream: str, events: Sequence[Event], expected_version: int
    ) -> list[Recorded]:
        stored = StoredEvent.objects.using(self.using)
        ids = [uuid.UUID(hex=e.id) for e in events]
        existing = {
            r.event.id: r
            for r in records(
                stored.filter(event_id__in=ids).order_by("position").values_list(*COLUMNS)
            )
        }
        retried = replayed_batch(stream, events, [existing.get(e.id) for e in events])
        if retried is not None:
            return retried
        current = stored.filter(stream=stream).aggregate(v=Max("version"))["v"] or 0
        if current != expected_version:
            raise WrongExpectedVersion(stream, expected_version, current)
        rows = [to_row(e, stream, current + i + 1) for i, e in enumerate(events)]
        stored.bulk_create(rows)
        return [
            Recorded(r.stream, r.version, r.position, e) for r, e in zip(rows, events, strict=True)
        ]

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        rows = (
            StoredEvent.objects.using(self.using)
            .filter(stream=stream, version__gt=after)
            .order_by("version")
            .values_list(*COLUMNS)
        )
        return records(rows)

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        rows = (
            StoredEvent.objects.using(self.using)
            .filter(position__gt=after)
            .order_by("position")
            .values_list(*COLUMNS)
        )
        return records(rows if limit is None else rows[:limit])

    def read_run(self, run_id: str, after: int = 0) -> list[Recorded]:
        """Every stream's events of one run, in position order."""
        rows = (
            StoredEvent.objects.using(self.using)
            .filter(run_id=run_id, position__gt=after)
            .order_by("position")
            .values_list(*COLUMNS)
        )
        return records(rows)

    def version(self, stream: str) -> int:
        found: int | None = (
            StoredEvent.objects.using(self.using)
            .filter(stream=stream)
            .aggregate(v=Max("version"))["v"]
        )
        return found or 0

    def last_position(self) -> int:
        found: int | None = StoredEvent.objects.using(self.using).aggregate(p=Max("position"))["p"]
        return found or 0
