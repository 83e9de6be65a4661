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

One snapshot per stream, the latest, replaced in place.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Protocol

FORMAT = 1


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
    body = json.dumps(data, separators=(",", ":"))
    digest = hashlib.sha256(body.encode()).hexdigest()
    return json.dumps({"format": FORMAT, "sha256": digest, "body": body}).encode()


def decode(data: bytes) -> LoopSnapshot | None:
    """The snapshot `data` holds, or None when it is torn, edited or of another format."""
    try:
        outer = json.loads(data)
        if not isinstance(outer, dict) or outer.get("format") != FORMAT:
            return None
        body = outer["body"]
        if hashlib.sha256(body.encode()).hexdigest() != outer["sha256"]:
            return None
        return LoopSnapshot(**json.loads(body))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


class Snapshots(Protocol):
    """Where a run's loop snapshots are kept: one per stream, the latest."""

    def load(self, stream: str) -> LoopSnapshot | None:
        """The stream's snapshot, or None when there is none or it cannot be read."""
        ...

    def save(self, snapshot: LoopSnapshot) -> None:
        """Keep `snapshot` as its stream's, in place of the one before."""
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


class FileSnapshots:
    """Snapshots as files in a directory, one per stream, each replaced atomically.

    Not fsync'd: a snapshot lost in a power cut costs a longer replay, never a wrong one (a
    torn file fails its digest and is ignored)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, stream: str) -> Path:
        name = hashlib.sha256(stream.encode()).hexdigest()[:32]
        return self.directory / f"{name}.snapshot.json"

    def load(self, stream: str) -> LoopSnapshot | None:
        try:
            data = self.path(stream).read_bytes()
        except FileNotFoundError:
            return None
        snapshot = decode(data)
        return snapshot if snapshot is not None and snapshot.stream == stream else None

    def save(self, snapshot: LoopSnapshot) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path(snapshot.stream)
        part = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
        part.write_bytes(encode(snapshot))
        os.replace(part, path)
