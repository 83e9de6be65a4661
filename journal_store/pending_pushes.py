"""The pushes of whole traces that wait for a worker: a row per traces stream (`traces-<id>`)
whose last whole-trace push event is TracePushQueued, removed when TracePushed or
TracePushFailed comes after it. `traces.waiting` counts them at every run's end, to bound the
queue (services/traces.py).

A read model kept by its projector (journal_store/projection.py, `PendingPushes`), so the
count costs what is waiting, where the query it replaced looked at every traces stream ever
written for its last push (docs/benchmarks.md). Being a projection, it is rebuilt from the
journal by `rebuild_projections`. An import carries no pushes (journal_store/admission.py):
a file's were the exporting store's, which no worker here would send. A store migrated to it
starts with no checkpoint for it: the first catch-up (a page's or a step's) reads the
journal's pushes once; until then a count reads them all.

A queued push whose worker died keeps its row until an outcome is journalled
(`services.traces.out_of_time`, a retry from the run page): as far as the journal says, it
still waits. Live pushes (TraceSpans*) on the same stream are not among the kinds read, so
they neither open nor close a wait.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connections

from journal_store.fold_rows import upsert
from journal_store.journal_rows import Row
from journal_store.models import Checkpoint, PendingPush
from runtime import streams
from runtime.events import TracePushed, TracePushFailed, TracePushQueued

NAME = "pending_pushes"
KINDS = (TracePushQueued.kind, TracePushed.kind, TracePushFailed.kind)
POSITION, STREAM, RUN_ID, KIND = 0, 2, 4, 5  # columns of journal_rows.SELECT
PREFIX = streams.traces("")
TABLE = PendingPush._meta.db_table


def last_pushes(rows: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each traces stream's last whole-trace push, from (stream, kind) pairs in journal order:
    it alone decides whether the stream waits."""
    return {stream: kind for stream, kind in rows if stream.startswith(PREFIX)}


def apply(rows: list[Row], using: str) -> None:
    """A batch of the journal's rows of KINDS, in position order: one write a stream."""
    last = last_pushes((row[STREAM], row[KIND]) for row in rows)
    at = {row[STREAM]: (row[RUN_ID], row[POSITION]) for row in rows}
    queued = [(s, *at[s]) for s, kind in last.items() if kind == TracePushQueued.kind]
    ended = [(s,) for s, kind in last.items() if kind != TracePushQueued.kind]
    with connections[using].cursor() as cursor:
        if queued:
            # Queued twice in a row (asked again before the first's outcome): still one push
            # waiting, and the later queueing's position kept.
            upsert(
                cursor,
                TABLE,
                ("stream",),
                queued,
                ("stream", "run_id", "position"),
                ("run_id", "position"),
            )
        if ended:
            cursor.executemany(f"DELETE FROM {TABLE} WHERE stream = %s", ended)


def checkpoint(using: str = "default") -> tuple[int | None, int]:
    """The projector's checkpoint (None: it never ran) and the journal's last position."""
    with connections[using].cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT position FROM {Checkpoint._meta.db_table} WHERE name = %s), "
            "(SELECT MAX(position) FROM journal_event)",
            [NAME],
        )
        at, top = cursor.fetchone()
    return at, top or 0


def count(at: int, using: str = "default") -> int:
    """The pushes waiting, as of now: the rows, moved by the pushes journalled after `at`
    (the checkpoint, read before this is called), which this reads and does not apply. It
    writes nothing, so a run's end takes no write lock to count (SQLite's, or a checkpoint
    row's), and it costs what is waiting and what came after `at`.

    No transaction is needed: the checkpoint, then the rows, then the pushes after the
    checkpoint, each statement seeing at least what the one before saw. The rows may have
    moved past the checkpoint (a catch-up committed in between), but what they then took in
    is read again among the pushes after it, and a stream's last push decides alone: taking
    it in twice changes nothing.
    """
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT stream FROM {TABLE}")
        waiting = {stream for (stream,) in cursor.fetchall()}
        marks = ", ".join(["%s"] * len(KINDS))
        cursor.execute(
            f"SELECT stream, kind FROM journal_event WHERE position > %s AND kind IN ({marks}) "
            "ORDER BY position",
            [at, *KINDS],
        )
        for stream, kind in last_pushes(cursor.fetchall()).items():
            if kind == TracePushQueued.kind:
                waiting.add(stream)
            else:
                waiting.discard(stream)
    return len(waiting)
