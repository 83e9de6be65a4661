"""The effects in flight: a row per effect stream (`effect-<key>`) whose last record is a
taking (EffectStarted, or EffectResumed: a failure sent again, or a performer taking over),
removed when its outcome (EffectSucceeded, EffectFailed) comes after it. The effect reconciler
on the beat (services/effects.py) reads them as its candidates, so a round costs what is in
flight, where reading every effect stream ever written cost the store's whole history
(docs/benchmarks.md, bench/effects_reconcile.py).

A read model kept by its projector (journal_store/projection.py, `OpenEffects`), rebuilt from
the journal by `rebuild_projections`. It only narrows the search: the reconciler reads each
candidate's own stream and that decides (runtime/coordination/reconciler.py), and settles at
the version it read, so a row left behind by a lagging projection settles nothing twice. A
store migrated to it starts with no checkpoint for it: the first catch-up reads the journal's
effect records once; until then `candidates` reads them all.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connections

from journal_store.fold_rows import upsert
from journal_store.journal_rows import Row
from journal_store.models import Checkpoint, OpenEffect
from runtime.coordination.effects import Ledger
from runtime.events import EffectFailed, EffectResumed, EffectStarted, EffectSucceeded

NAME = "open_effects"
TAKINGS = (EffectStarted.kind, EffectResumed.kind)
KINDS = (*TAKINGS, EffectSucceeded.kind, EffectFailed.kind)
POSITION, STREAM, RUN_ID, KIND = 0, 2, 4, 5  # columns of journal_rows.SELECT
PREFIX = Ledger.stream("")
TABLE = OpenEffect._meta.db_table


def last_records(rows: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each effect stream's last kind, from (stream, kind) pairs in journal order: it alone
    says whether the effect is in flight. Those kinds on other streams are not effects'."""
    return {stream: kind for stream, kind in rows if stream.startswith(PREFIX)}


def apply(rows: list[Row], using: str) -> None:
    """A batch of the journal's rows of KINDS, in position order: one write a stream."""
    last = last_records((row[STREAM], row[KIND]) for row in rows)
    at = {row[STREAM]: (row[RUN_ID], row[POSITION]) for row in rows}
    opened = [(s, *at[s]) for s, kind in last.items() if kind in TAKINGS]
    settled = [(s,) for s, kind in last.items() if kind not in TAKINGS]
    with connections[using].cursor() as cursor:
        if opened:
            # Taken over (or sent again after a failure): still one effect in flight, at its
            # latest taking's position.
            upsert(
                cursor,
                TABLE,
                ("stream",),
                opened,
                ("stream", "run_id", "position"),
                ("run_id", "position"),
            )
        if settled:
            cursor.executemany(f"DELETE FROM {TABLE} WHERE stream = %s", settled)


def candidates(using: str = "default") -> list[str]:
    """The keys of the effects in flight as of now, oldest taking first: the rows, moved by the
    effect records journalled after the projector's checkpoint, which this reads and does not
    apply. It writes nothing, so the beat takes no write lock to look, and it costs what is in
    flight and what came after the checkpoint.

    No transaction is needed (as pending_pushes.count): the checkpoint, then the rows, then
    the records after the checkpoint, each statement seeing at least what the one before saw,
    and a stream's last record decides alone, so taking one in twice changes nothing."""
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT position FROM {Checkpoint._meta.db_table} WHERE name = %s", [NAME])
        found = cursor.fetchone()
        cursor.execute(f"SELECT stream, position FROM {TABLE}")
        open_at = dict(cursor.fetchall())
        marks = ", ".join(["%s"] * len(KINDS))
        cursor.execute(
            f"SELECT stream, kind, position FROM journal_event WHERE position > %s "
            f"AND kind IN ({marks}) ORDER BY position",
            [found[0] if found else 0, *KINDS],
        )
        after = cursor.fetchall()
    positions = {stream: position for stream, _, position in after}
    for stream, kind in last_records((stream, kind) for stream, kind, _ in after).items():
        if kind in TAKINGS:
            open_at[stream] = positions[stream]
        else:
            open_at.pop(stream, None)
    return [s.removeprefix(PREFIX) for s in sorted(open_at, key=lambda s: (open_at[s], s))]
