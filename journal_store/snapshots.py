"""Agent-loop snapshots in the journal's database: the store the workers keep them in.

A cold step (a worker that holds no warm flight of the run: it restarted, or another worker
drove the run before) resumes from its agent loop's latest snapshot (runtime/snapshots.py).
Kept beside the journal, that snapshot is there for whichever worker, on whichever host, drives
the run next, and it is gone from every host once the run ends. One row per stream, replaced by
each save, holding the snapshot as the file store encodes it: the digest in its header is
checked at load, and the snapshot is then checked against the stream before it is trusted.

A save is a short transaction of its own, made after the events it stands after are committed
(the session saves once its held batch is appended), and it does not wait for the disk (`lax`):
the next turn's commit flushes it with its own events. A save that fails (the database busy past
its timeout, a lost connection) is logged and left out: a snapshot not written costs the next
cold step a longer replay, never a wrong one, so it must not fail the step.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DatabaseError, connections, transaction

from journal_store.fold_rows import upsert
from journal_store.models import LoopSnapshot as Row
from runtime.snapshots import LoopSnapshot, decode, encode

log = logging.getLogger(__name__)
TABLE = Row._meta.db_table


@contextmanager
def lax(using: str) -> Iterator[Any]:
    """A transaction whose commit does not wait for the disk, for a cache; yields its cursor.
    On SQLite (WAL) synchronous=NORMAL for this commit alone, restored after; on PostgreSQL
    synchronous_commit off inside it. Neither can leave the database inconsistent: a crash
    may lose the latest snapshot, and the journal's next commit, made with the usual
    durability, takes it to the disk with its own events. Inside a transaction the caller
    holds, SQLite's setting is left alone (it refuses to change there, and the caller's commit
    decides anyway)."""
    connection = connections[using]
    pragma = connection.vendor == "sqlite" and not connection.in_atomic_block
    before = 0
    if pragma:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA synchronous")
            (before,) = cursor.fetchone()
            cursor.execute("PRAGMA synchronous=NORMAL")
    try:
        with transaction.atomic(using=using), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
            yield cursor
    finally:
        if pragma:
            with connection.cursor() as cursor:
                cursor.execute(f"PRAGMA synchronous={int(before)}")


class DatabaseSnapshots:
    """runtime.snapshots.Snapshots on one of Django's database connections."""

    def __init__(self, using: str = "default") -> None:
        self.using = using

    def load(self, stream: str) -> LoopSnapshot | None:
        with connections[self.using].cursor() as cursor:
            cursor.execute(f"SELECT data FROM {TABLE} WHERE stream = %s", [stream])
            row = cursor.fetchone()
        if row is None:
            return None
        snapshot = decode(bytes(row[0]))  # PostgreSQL hands a bytea back as a memoryview
        return snapshot if snapshot is not None and snapshot.stream == stream else None

    def save(self, snapshot: LoopSnapshot) -> None:
        data = encode(snapshot)
        try:
            with lax(self.using) as cursor:
                upsert(
                    cursor,
                    TABLE,
                    ("stream",),
                    [(snapshot.stream, snapshot.version, data)],
                    ("stream", "version", "data"),
                    ("version", "data"),
                )
        except DatabaseError as exc:
            log.warning(
                "stream %s: its loop snapshot at version %d was not kept (%s); a cold step "
                "replays from the one before, or from the start",
                snapshot.stream,
                snapshot.version,
                exc,
            )

    def discard(self, stream: str) -> None:
        with connections[self.using].cursor() as cursor:
            cursor.execute(f"DELETE FROM {TABLE} WHERE stream = %s", [stream])
