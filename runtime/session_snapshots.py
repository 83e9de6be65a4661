"""A session's loop snapshots (runtime/snapshots.py): reading a stream's record around the
snapshot that fits it, taking that snapshot up where its loop begins again, and keeping a new
one at a turn boundary once what it stands after is written.

A replay neither reads nor takes them (its session has no `snapshots`): it re-runs every turn
against the record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from runtime.events import Event, ModelResponded
from runtime.journal import Journal, read_between
from runtime.snapshots import LoopSnapshot, Snapshots, fits

if TYPE_CHECKING:
    from runtime.session import Session


def read_record(
    journal: Journal, stream: str, snapshots: Snapshots | None
) -> tuple[list[Event | None], tuple[int, int] | None, LoopSnapshot | None]:
    """The stream's record, the gap a snapshot covers in it when one fits the journal (None in
    its places: they are not read), and that snapshot."""
    snap = snapshots.load(stream) if snapshots is not None else None
    if snap is not None and snap.start < snap.version:
        head = read_between(journal, stream, 0, snap.start)
        tail = journal.read(stream, snap.version - 1)
        if fits(snap, head, tail):
            found: list[Event | None] = [
                *(r.event for r in head),
                *([None] * (snap.version - 1 - snap.start)),
                *(r.event for r in tail),
            ]
            return found, (snap.start, snap.version - 1), snap
    return [r.event for r in journal.read(stream)], None, None


def restore(
    session: Session,
    agent: str,
    fingerprint: str,
    accept: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any] | None:
    """Called by an agent loop right after its RunStarted: the loop's state from the
    snapshot the session found, with the session moved past the turns it covers; None
    when there is none for this place and loop (the turns are then read and replayed).
    `accept` is asked last, before anything moves: the loop's callbacks say whether the
    state they kept fits theirs now."""
    snap = session.snapshot_found
    if snap is None or session.cursor != snap.start or session.position != snap.start:
        # Not this loop's: the harness runs loops before the one the snapshot is of (the
        # planner's before the coder's). Once the cursor is past its place it is never
        # taken up, and reaching the events it covers reads them back (Record.fill).
        return None
    session.snapshot_found = None  # this loop's place: taken up now or never
    if snap.agent != agent or snap.fingerprint != fingerprint:
        return None
    client = session.clients.get(agent)
    before = sum(
        1
        for e in session.record.recorded[: snap.start]
        if isinstance(e, ModelResponded) and e.agent == agent
    )
    if client is None or client.served != before:
        return None
    if accept is not None and not accept(snap.loop):
        return None
    session.counts = Counter(snap.session["counts"])
    session.record.emitted.extend(session.record.recorded[snap.start : snap.version])
    session.cursor = snap.version
    session.skipped = snap.version - snap.start - 1
    client.rebase(snap.session["mark"])
    return snap.loop


def checkpoint(
    session: Session, agent: str, start: tuple[int, str], fingerprint: str, loop: dict[str, Any]
) -> None:
    """Keep an agent loop's state at a turn boundary, live, as its stream's snapshot.

    Not taken where the session holds state the snapshot would not carry: a fork's limits
    or a person's messages not yet read, or a model client that cannot tell its place.

    `start` is the stream version of the loop's RunStarted and that event's id, as the
    journal holds it (the loop reads it once: a parked flight may have let go of it).
    The snapshot stands after the events held for the next batch (the last tool's
    result), and is kept once they are written: it never names a version the journal
    does not hold, and it costs no commit of its own."""
    if session.snapshots is None or not session.live:
        return
    limits = session.limits
    if session.inbox or limits.max_turns is not None or limits.allowance is not None:
        return
    client = session.clients.get(agent)
    mark = client.place() if client is not None else None
    if mark is None:
        return
    at = session.version + session.held
    session.snapshot_due = LoopSnapshot(
        stream=session.stream,
        start=start[0],
        start_id=start[1],
        version=at,
        version_id=session.record.stored(at).id,
        agent=agent,
        fingerprint=fingerprint,
        loop=loop,
        session={"counts": dict(session.counts), "mark": mark},
    )
    if not session.held:
        keep(session)


def keep(session: Session) -> None:
    """Save the snapshot taken, now that every event it stands after is written."""
    snapshot, session.snapshot_due = session.snapshot_due, None
    if snapshot is not None and session.snapshots is not None:
        session.snapshots.save(snapshot)
