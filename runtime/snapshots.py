"""Snapshots of a running agent loop: a cache that lets a cold resume skip the turns before it.

A cold resume re-runs the harness over the whole record (runtime/session.py), so its cost
grows with the run. Every `every` live turns the agent loop (runtime/loop.py) hands its own
state to the session, which keeps it here beside the journal: the loop's locals (turn, the part
of the conversation a future window can still show, the nudge, the loop breaker, what it
debited), the session's counters, and the model client's place in its script. A resume that
finds a snapshot reads the events before the loop began and those after the snapshot, and the
loop takes up its state from there: the turns in between are neither read nor replayed.

A snapshot is a cache, never the truth (docs/long-runs.md, "Snapshots of the running loop"):

- it is not an event: the journal an uninterrupted run writes is the same with or without it,
  and `replay` never reads one (replay re-runs every turn and checks it against the record);
- it is checked before it is trusted: its digest (a torn or edited file is ignored), the ids of
  the events it was taken at and of its loop's start (a snapshot of another database's run of
  the same id is ignored), the loop's settings (a changed system prompt, window, toolbox or
  budget is a different loop) and the session's place (it is taken up only right after its
  loop's RunStarted);
- whatever does not check out is ignored, and the session reads the skipped events after all
  and replays them, as every cold resume did before.

The latest snapshot per stream is the one a resume takes (a file store keeps the one before it
too, for a save torn by a crash: `FileSnapshots`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Protocol

import pydantic_core

from runtime.events import RunStarted
from runtime.journal import Recorded

FORMAT = 2
# Turns between an agent loop's snapshots, unless the host says otherwise. A snapshot costs about
# 0.2 ms, an eighth of a cheap turn (the kept window as JSON, a write without fsync:
# docs/long-runs.md), and a cold resume replays at most EVERY - 1 turns after the latest one.
EVERY = 5
# A snapshot as stored: one header line, then the body (the snapshot as JSON). The header says
# the format, the body's length and its SHA-256, so a torn or edited body is told from a whole
# one, and bytes after the body (left by a longer snapshot written there before) are ignored.
MAGIC = b"minutes-snapshot"


@dataclass(frozen=True)
class LoopSnapshot:
    """One agent loop's state at a turn boundary, and where in the stream it was taken."""

    stream: str
    start: int  # the stream version of the loop's RunStarted
    start_id: str  # ...and that event's id
    version: int  # the stream version the state stands at (every event up to it is in it)
    version_id: str  # ...and that event's id
    agent: str
    fingerprint: str  # the loop's settings (runtime/loop.py: `fingerprint`)
    loop: dict[str, Any]  # the loop's own locals, as runtime/loop.py wrote them
    session: dict[str, Any]  # the session's counters and the client's place


def encode(snapshot: LoopSnapshot) -> bytes:
    # Not dataclasses.asdict: it deep-copies the loop's state, which is JSON already.
    data = {f.name: getattr(snapshot, f.name) for f in fields(snapshot)}
    # pydantic's encoder (in Rust): a fourth of json.dumps's time on a 15 KB window, and a
    # snapshot is taken every few turns.
    body = pydantic_core.to_json(data)
    digest = hashlib.sha256(body).hexdigest()
    return b"%s %d %d %s\n%s" % (MAGIC, FORMAT, len(body), digest.encode(), body)


def decode(data: bytes) -> LoopSnapshot | None:
    """The snapshot `data` holds, or None when it is torn, edited or of another format."""
    header, newline, rest = data.partition(b"\n")
    try:
        magic, form, length, digest = header.split(b" ")
        if not newline or magic != MAGIC or int(form) != FORMAT:
            return None
        body = rest[: int(length)]
        if len(body) != int(length) or hashlib.sha256(body).hexdigest().encode() != digest:
            return None
        return LoopSnapshot(**pydantic_core.from_json(body))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def fits(snap: LoopSnapshot, head: list[Recorded], tail: list[Recorded]) -> bool:
    """Whether a snapshot was taken of this stream: its loop's RunStarted and the event it
    stands at are the ones stored there (not those of another database's run of that id)."""
    if len(head) != snap.start or not tail or tail[0].version != snap.version:
        return False
    started = head[-1].event
    return (
        started.id == snap.start_id
        and isinstance(started, RunStarted)
        and started.agent == snap.agent
        and tail[0].event.id == snap.version_id
    )


class Snapshots(Protocol):
    """Where a run's loop snapshots are kept: one per stream, the latest."""

    def load(self, stream: str) -> LoopSnapshot | None:
        """The stream's snapshot, or None when there is none or it cannot be read."""
        ...

    def save(self, snapshot: LoopSnapshot) -> None:
        """Keep `snapshot` as its stream's, in place of the one before."""
        ...

    def discard(self, stream: str) -> None:
        """Forget the stream's snapshots (its run has ended: nothing will resume it)."""
        ...


class MemorySnapshots:
    """Snapshots in a dict, kept encoded (as a file would hold them): for tests and benches."""

    def __init__(self) -> None:
        self.stored: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def load(self, stream: str) -> LoopSnapshot | None:
        with self._lock:
            data = self.stored.get(stream)
        return None if data is None else decode(data)

    def save(self, snapshot: LoopSnapshot) -> None:
        data = encode(snapshot)
        with self._lock:
            self.stored[snapshot.stream] = data

    def discard(self, stream: str) -> None:
        with self._lock:
            self.stored.pop(stream, None)


class FileSnapshots:
    """Snapshots as files in a directory: two slots per stream, written in turn.

    A save overwrites, in place, the slot that does not hold the stream's latest snapshot; a
    load reads both and takes the later of those that check out. A save torn by a crash (or
    read half written by another process) fails its digest, and the other slot's snapshot, one
    snapshot older, is taken instead. Overwriting in place is what makes a snapshot cheap
    enough to take every few turns: on ext4 a file replaced by a rename, or truncated and
    rewritten, has its blocks flushed to disk at once (`auto_da_alloc`): 120-170 us a save,
    against 6 us to overwrite. Not fsync'd: a snapshot lost in a power cut costs a longer
    replay, never a wrong one."""

    SLOTS = ("a", "b")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._names: dict[str, str] = {}
        # Per stream, the slot holding the latest snapshot this store read or wrote.
        self._latest: dict[str, str] = {}
        self._lock = threading.Lock()

    def _name(self, stream: str) -> str:
        """The stream's files' name: a digest, since a stream's name is not a file's."""
        name = self._names.get(stream)
        if name is None:
            name = self._names[stream] = hashlib.sha256(stream.encode()).hexdigest()[:32]
        return name

    def path(self, stream: str, slot: str | None = None) -> Path:
        """The file of `stream`'s `slot`; by default the one holding its latest snapshot."""
        if slot is None:
            slot = self._latest.get(stream) or self._read(stream)[0] or self.SLOTS[0]
        return self.directory / f"{self._name(stream)}.{slot}.snapshot"

    def load(self, stream: str) -> LoopSnapshot | None:
        return self._read(stream)[1]

    def _read(self, stream: str) -> tuple[str | None, LoopSnapshot | None]:
        """The slot holding the stream's latest sound snapshot, and the snapshot."""
        best: tuple[str | None, LoopSnapshot | None] = (None, None)
        for slot in self.SLOTS:
            try:
                data = self.path(stream, slot).read_bytes()
            except FileNotFoundError:
                continue
            snapshot = decode(data)
            if snapshot is None or snapshot.stream != stream:
                continue
            if best[1] is None or snapshot.version > best[1].version:
                best = (slot, snapshot)
        with self._lock:
            if best[0] is not None:
                self._latest[stream] = best[0]
            else:
                self._latest.pop(stream, None)
        return best

    def save(self, snapshot: LoopSnapshot) -> None:
        stream = snapshot.stream
        if stream not in self._latest:
            self._read(stream)  # once per stream and store: which slot to spare
        latest = self._latest.get(stream)
        slot = self.SLOTS[1] if latest == self.SLOTS[0] else self.SLOTS[0]
        path = self.path(stream, slot)
        data = encode(snapshot)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        except FileNotFoundError:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        with self._lock:
            self._latest[stream] = slot

    def discard(self, stream: str) -> None:
        for slot in self.SLOTS:
            self.path(stream, slot).unlink(missing_ok=True)
        # and the file a snapshot of format 1 was kept in, where one is left
        (self.directory / f"{self._name(stream)}.snapshot.json").unlink(missing_ok=True)
        with self._lock:
            self._latest.pop(stream, None)
