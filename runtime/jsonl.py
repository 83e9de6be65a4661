"""JsonlJournal: a Journal in one JSONL file, one event per line, fsync per appended batch.

The line is the unit of commit. A crash mid-write leaves a torn final line; the reader tolerates
it, reports it, and the next append cuts it off (it was never acknowledged). Anything else that
cannot be read stops the reader with the line number and the problem: a journal is evidence,
and skipping a line of evidence silently is worse than refusing to go on.

Several processes may append to the same file: an exclusive `flock` serializes writers, and each
writer catches up with lines others wrote before checking its expected version.
"""

from __future__ import annotations

import bisect
import contextlib
import fcntl
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runtime import flat, streams
from runtime.events import Event, EventFormatError
from runtime.journal import (
    Batch,
    Fence,
    Guard,
    OwnedJournal,
    Recorded,
    Stamp,
    WrongExpectedVersion,
    check_batch,
    check_batches,
    check_fence,
    check_guards,
    landed,
    replayed_batch,
)


class JournalCorrupt(Exception):
    """A line of a journal file cannot be read. Names the file, the line and the problem."""

    def __init__(self, path: str | Path, line_no: int, problem: str) -> None:
        super().__init__(f"{path}, line {line_no}: {problem}")
        self.path = str(path)
        self.line_no = line_no
        self.problem = problem


@dataclass(frozen=True, slots=True)
class TornLine:
    """The final line of a file that stops mid-event."""

    line_no: int
    size: int
    problem: str

    def describe(self, path: str | Path) -> str:
        return (
            f"{path}, line {self.line_no}: torn final line ({self.size} bytes, {self.problem}); "
            "ignored: it was never completely written"
        )


DEFAULT_STREAM = "run-imported"


def _last(records: list[Recorded]) -> int:
    """A stream's version: its last event's (a shared stream's slice may skip versions)."""
    return records[-1].version if records else 0


def _owned(stream: str) -> bool:
    """Whether the stream is some run's own (runtime/streams.py), not one runs share."""
    return stream == DEFAULT_STREAM or bool(streams.owners(stream))


class JsonlJournal:
    """A Journal backed by one JSONL file (created on first append)."""

    def __init__(self, path: str | Path, *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.torn: TornLine | None = None
        self._lock = threading.Lock()
        self._all: list[Recorded] = []
        self._streams: dict[str, list[Recorded]] = {}
        self._by_id: dict[str, Recorded] = {}
        self._written: dict[str, dict[str, None]] = {}  # run id -> the streams it wrote to
        self._offset = 0  # bytes of complete lines already read
        self._lines = 0
        self._unterminated = False  # the last complete event has no newline after it
        with self._lock:
            self._catch_up()

    # --- reading ---------------------------------------------------------------------------

    def _catch_up(self) -> None:
        """Read whatever other writers added since we last looked."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size == self._offset and not self.torn:
            return
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            data = f.read()
        self.torn = None
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            line_no = self._lines + 1
            if end == -1:
                self._read_last_line(data[start:], line_no)
                return
            self._take(data[start:end], line_no)
            self._offset += end + 1 - start
            self._lines = line_no
            start = end + 1

    def _read_last_line(self, raw: bytes, line_no: int) -> None:
        """A final line without a newline: an event if it parses, else a torn write."""
        if not raw.strip():
            return
        try:
            parsed = flat.loads(raw, line_no, str(self.path))
        except EventFormatError as exc:
            if exc.args[0].startswith(("not JSON", "not UTF-8")):
                self.torn = TornLine(line_no, len(raw), exc.args[0])
                return
            raise JournalCorrupt(self.path, line_no, exc.args[0]) from None
        self._store(parsed, line_no)
        self._offset += len(raw)
        self._lines = line_no
        self._unterminated = True

    def _take(self, raw: bytes, line_no: int) -> None:
        if not raw.strip():
            raise JournalCorrupt(self.path, line_no, "empty line")
        try:
            parsed = flat.loads(raw, line_no, str(self.path))
        except EventFormatError as exc:
            raise JournalCorrupt(self.path, line_no, exc.args[0]) from None
        self._store(parsed, line_no)

    def _store(self, parsed: flat.FlatLine, line_no: int) -> None:
        event = parsed.event
        stream = parsed.stream or (
            streams.journal(event.run_id) if event.run_id else DEFAULT_STREAM
        )
        records = self._streams.setdefault(stream, [])
        version = _last(records) + 1
        if parsed.version is not None and parsed.version > version and not _owned(stream):
            # A stream other runs write too (an order's facts and claims, an intent): a run
            # exported from a store carries only its own events of it, at the store's versions,
            # so it may start past 1 and skip the others' writes. A run's own streams may not.
            version = parsed.version
        if parsed.version is not None and parsed.version != version:
            raise JournalCorrupt(
                self.path,
                line_no,
                f"broken version sequence in stream {stream!r}: "
                f"expected version {version}, found {parsed.version}",
            )
        if event.id in self._by_id:
            raise JournalCorrupt(self.path, line_no, f"event id {event.id} appears twice")
        rec = Recorded(stream, version, len(self._all) + 1, event)
        records.append(rec)
        self._all.append(rec)
        self._by_id[event.id] = rec
        self._written.setdefault(event.run_id, {})[stream] = None

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        with self._lock:
            self._catch_up()
            records = self._streams.get(stream, [])
            # By version, not by index: a shared stream's slice may skip versions. A search,
            # so that reading a long run's tail costs the tail, not the run.
            return records[bisect.bisect_right(records, after, key=lambda r: r.version) :]

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        with self._lock:
            self._catch_up()
            end = None if limit is None else after + limit
            return self._all[after:end]

    def version(self, stream: str) -> int:
        with self._lock:
            self._catch_up()
            return _last(self._streams.get(stream, []))

    def read_prefix(self, prefix: str) -> list[Recorded]:
        with self._lock:
            self._catch_up()
            return [r for r in self._all if r.stream.startswith(prefix)]

    def read_owned(self, run_id: str, prefix: str) -> list[Recorded]:
        """Every event of the streams named `prefix`... that run `run_id` wrote to, in position
        order (runtime/fork.py owned): from the streams the run wrote to, not every event of
        the file, which read_prefix goes through."""
        with self._lock:
            self._catch_up()
            names = [s for s in self._written.get(run_id, {}) if s.startswith(prefix)]
            return sorted((r for s in names for r in self._streams[s]), key=lambda r: r.position)

    def streams(self) -> list[str]:
        with self._lock:
            self._catch_up()
            return list(self._streams)

    # --- writing ---------------------------------------------------------------------------

    def append(
        self,
        stream: str,
        events: Sequence[Event],
        expected_version: int,
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
        stamp: Stamp | None = None,
    ) -> list[Recorded]:
        check_batch(stream, events, expected_version)
        return self._append([(stream, events, expected_version)], fence, guards, stamp)

    def append_batches(
        self,
        batches: Sequence[Batch],
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
    ) -> list[Recorded]:
        """Several streams' batches in one write of the file, under one lock: all or none."""
        check_batches(batches)
        return self._append(batches, fence, guards)

    def _append(
        self,
        batches: Sequence[Batch],
        fence: Fence | None,
        guards: Sequence[Guard],
        stamp: Stamp | None = None,
    ) -> list[Recorded]:
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._catch_up()
                if fence is not None:
                    lease = self._streams.get(fence[0])
                    check_fence(fence, lease[-1] if lease else None)
                check_guards(guards, lambda stream: _last(self._streams.get(stream, [])))
                planned: list[list[Recorded] | Batch] = []
                versions: dict[str, int] = {}  # a stream's version after the batches before
                for stream, events, expected_version in batches:
                    events = landed(events, stamp)  # under the lock: when it lands
                    found = [self._by_id.get(e.id) for e in events]
                    retried = replayed_batch(stream, events, found)
                    if retried is not None:
                        planned.append(retried)
                        continue
                    current = versions.get(stream, _last(self._streams.get(stream, [])))
                    if current != expected_version:
                        raise WrongExpectedVersion(stream, expected_version, current)
                    versions[stream] = current + len(events)
                    planned.append((stream, events, current))
                written = iter(self._write(fd, [b for b in planned if isinstance(b, tuple)]))
                return [r for b in planned for r in (next(written) if isinstance(b, tuple) else b)]
            finally:
                os.close(fd)  # closing releases the flock

    def _write(self, fd: int, batches: Sequence[Batch]) -> list[list[Recorded]]:
        """Write the batches (stream, events, the stream's version before them) as one payload;
        the records of each batch."""
        if not batches:
            return []
        lines = [
            flat.dumps(e, stream, current + i + 1)
            for stream, events, current in batches
            for i, e in enumerate(events)
        ]
        payload = ("\n".join(lines) + "\n").encode()
        if self.torn is not None:
            os.ftruncate(fd, self._offset)  # drop the torn tail: it was never acknowledged
            self.torn = None
        elif self._unterminated:
            payload = b"\n" + payload
        os.lseek(fd, self._offset, os.SEEK_SET)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            if self.fsync:
                os.fsync(fd)
        except BaseException:
            # A write that stopped part way (a full disk, a file past its size limit, an
            # interrupt) leaves no line of it: a complete line is an event to every reader,
            # and the caller is told that nothing was written. Only a crash mid-write leaves
            # complete lines of a batch behind (the line is the unit of commit).
            with contextlib.suppress(OSError):  # the failure that brought us here is the news
                os.ftruncate(fd, self._offset)
            raise
        self._unterminated = False
        out: list[list[Recorded]] = []
        line_no = self._lines
        for stream, events, current in batches:
            mine = []
            for i, event in enumerate(events):
                line_no += 1
                self._store(flat.FlatLine(event, stream, current + i + 1), line_no)
                mine.append(self._all[-1])
            out.append(mine)
        self._lines = line_no
        self._offset += len(payload)
        return out


if TYPE_CHECKING:  # fork.owned asks for this protocol by type: mypy holds the journal to it
    owned_journal: type[OwnedJournal] = JsonlJournal
