"""What an import says of an event id the store refuses, and how its first reading finds one.

The store holds each event id once (journal_event's unique id): it refuses a line whose id it
holds already, stored before the import or appended by an earlier line of the file. The
reading that writes learns it as it appends, and asks the store which id it was. The first
reading appends nothing and takes no lock (transfer.import_journal), so it asks the store for
the ids it holds, a chunk at a time, and keeps the ids the file would have appended itself
(FileIds); it says what the reading that writes would say, in the same words.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Mapping
from typing import Protocol

from journal_store.journal import DjangoJournal
from journal_store.journal_rows import hex_id
from runtime.events import Event

ID = 16  # bytes an event id takes (a UUID's)
Batch = list[tuple[int, Event]]  # consecutive lines of one stream (line, event), appended as one


class Appended(Protocol):
    """A stream being imported (import_reading._Stream): its version before the import, and the line
    of each event appended since, by place."""

    stored: int
    lines: array[int]


class FileIds:
    """The line of each event id the file has appended (or would have), found by its id in
    constant time, in 16 bytes a line and 8 to 16 of index an id: 26 MB for the largest file an
    import reads (a million lines), where a set of the ids as Python ints took 78 MB.

    The id of line n is bytes 16(n-1) to 16n of `ids` (zeros for a line that appended nothing);
    `slots` is an open-addressing table of line numbers (0: empty), at most half full, keyed
    by the id's hash: bytes hash with a seed drawn for each process, so a file cannot choose
    ids that all fall into one slot."""

    def __init__(self) -> None:
        self.ids = bytearray()
        self.slots = array("i", bytes(4 * 1024))  # a line number fits: 2**31 lines is 32 GB here
        self.count = 0

    def add(self, key: bytes, line: int) -> int | None:
        """The earlier line that holds `key`; or None, and `line` (past every line added
        before) holds it now."""
        slots, ids = self.slots, self.ids
        mask = len(slots) - 1
        slot = hash(key) & mask
        while earlier := slots[slot]:
            if ids[ID * (earlier - 1) : ID * earlier] == key:
                return earlier
            slot = (slot + 1) & mask
        slots[slot] = line
        if len(ids) != ID * (line - 1):  # lines come in the file's order, some appending nothing
            ids.extend(bytes(ID * (line - 1) - len(ids)))
        ids += key
        self.count += 1
        if 2 * self.count > len(slots):
            self._grow()
        return None

    def _grow(self) -> None:
        old, ids = self.slots, self.ids
        slots = array("i", bytes(8 * len(old)))  # twice as many slots, of 4 bytes
        mask = len(slots) - 1
        for line in old:
            if line:
                slot = hash(bytes(ids[ID * (line - 1) : ID * line])) & mask
                while slots[slot]:
                    slot = (slot + 1) & mask
                slots[slot] = line
        self.slots = slots


class Ids:
    """One reading's account of the ids it appends: `start` is the store's last position before
    the import (later ones are its own), `streams` what it has appended to each stream; `dry`,
    it appends nothing and keeps the ids instead."""

    def __init__(
        self, journal: DjangoJournal, start: int, streams: Mapping[str, Appended], dry: bool
    ) -> None:
        self.journal = journal
        self.start = start
        self.streams = streams
        self.file = FileIds() if dry else None

    def held(self, ids: list[str]) -> dict[str, tuple[int, str, int]]:
        """Of these ids (a chunk's at most), those the store holds: id -> (position, stream,
        version). In SQL: through the ORM, a chunk's 500 ids cost more than the query."""
        if not ids:
            return {}
        marks = ", ".join(["%s"] * len(ids))
        with self.journal.connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, position, stream, version FROM journal_event WHERE id IN ({marks})",
                ids,
            )
            return {
                hex_id(i): (position, stream, version) for i, position, stream, version in cursor
            }

    def unstored(self, batch: Batch, held: dict[str, tuple[int, str, int]]) -> str | None:
        """What the store would refuse of the batch, as refusal would say it (None: nothing):
        an id twice in the batch; else the id it stored first (`held`), stored before the
        import; else the id of the earliest line the file appended before. The batch's ids are
        kept, for the batches after it."""
        assert self.file is not None, "a reading that writes asks the store"
        earlier = [
            (line, number)
            for number, event in batch
            if (line := self.file.add(bytes.fromhex(event.id), number)) is not None
        ]
        if earlier and (problem := repeated(batch)):  # (a line of the batch is one earlier)
            return problem
        stored = [(held[event.id], number, event.id) for number, event in batch if event.id in held]
        if stored:
            (_, where, version), number, event_id = min(stored)
            return clash(number, f"event id {event_id} is already stored", where, version)
        if not earlier:
            return None
        line, number = min(earlier)
        where, version = self.place_of(line)
        return clash(number, f"repeats the event id of line {line}", where, version)

    def refusal(self, name: str, batch: Batch, exc: Exception) -> str:
        """Why the store refused a batch, at the line that caused it when an id did."""
        if problem := repeated(batch):
            return problem
        first_line = {event.id: number for number, event in batch}
        found = self.held(list(first_line))
        if not found:
            lines = f"lines {batch[0][0]}-{batch[-1][0]}"
            return f"{lines}: stream {name!r}: the store refused them: {exc}"
        # the id the store stored first (lowest position)
        event_id, (position, where, version) = min(found.items(), key=lambda item: item[1])
        what = f"event id {event_id} is already stored"
        if position > self.start:
            what = f"repeats the event id of {self.line_of(where, version)}"
        return clash(first_line[event_id], what, where, version)

    def line_of(self, name: str, version: int) -> str:
        """The line of the file that wrote `version` of stream `name` in this import."""
        stream = self.streams.get(name)
        place = version - 1 - stream.stored if stream is not None else -1
        if stream is None or not 0 <= place < len(stream.lines):
            return "an earlier line"  # (a place this import did not append: not expected)
        return f"line {stream.lines[place]}"

    def place_of(self, line: int) -> tuple[str, int]:
        """The stream and version this import appended `line` at."""
        for name, stream in self.streams.items():
            at = bisect_left(stream.lines, line)
            if at < len(stream.lines) and stream.lines[at] == line:
                return name, stream.stored + 1 + at
        raise LookupError(f"line {line} appended nothing")


def repeated(batch: Batch) -> str | None:
    """The first line of the batch that repeats the id of an earlier line of it."""
    first: dict[str, int] = {}
    for number, event in batch:
        if event.id in first:
            return f"line {number}: field 'id': repeats the event id of line {first[event.id]}"
        first[event.id] = number
    return None


def clash(number: int, what: str, stream: str, version: int) -> str:
    """Line `number`'s id is stored already (`what` says how), at `version` of `stream`."""
    return f"line {number}: field 'id': {what} (stream {stream!r}, version {version})"
