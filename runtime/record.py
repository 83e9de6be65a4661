"""A session's view of its stream: what the journal held when the session began (the record)
and every event the session went through or emitted since, one per stream version, with one
range of places not held in memory, read back from the journal when anything looks there.

The range (`gap`) is left by a loop snapshot (runtime/snapshots.py: the turns it lets a resume
skip, never read) and grown by `trim` (the events a flight parked between steps lets go of:
runtime/turn_boundary.py). Both are in the journal, so a look at them costs one
ranged read, never a wrong answer: the events read back are the journal's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from runtime.events import Event
from runtime.journal import Journal, read_between
from runtime.stops import ReplayDivergence


class Record:
    """The stream's events by version, as one session holds them (see the module docstring).

    `recorded` is the record as the session found it; `emitted` holds every event the session
    went through (a recorded one replayed, or the record's own where a snapshot skipped it)
    or wrote, one per version. None in either marks a place in `gap`."""

    def __init__(
        self,
        source: Journal,
        stream: str,
        recorded: list[Event | None],
        gap: tuple[int, int] | None = None,
        on_fill: Callable[[], None] | None = None,
    ) -> None:
        self.source = source  # where places in the gap are read back from
        self.stream = stream
        self.recorded = recorded
        self.emitted: list[Event | None] = []
        self.gap = gap  # indexes [a, b) not held in memory
        self.on_fill = on_fill  # told once a read back made the record whole

    def whole_record(self) -> list[Event]:
        self.fill()
        return cast(list[Event], self.recorded)

    def whole_emitted(self) -> list[Event]:
        self.fill()
        return cast(list[Event], self.emitted)

    @property
    def resident(self) -> int:
        """How many of the events emitted this session are held in memory."""
        return sum(e is not None for e in self.emitted)

    def at(self, index: int) -> Event:
        """The recorded event at `index` (0-based), read back if it is in the gap."""
        event = self.recorded[index]
        if event is None:
            self.fill()
            event = self.recorded[index]
            assert event is not None
        return event

    def stored(self, version: int) -> Event:
        """The event stored at `version` of the stream: the record's own for a recorded place
        (a replayed event is re-made with a new id and time), else the one written."""
        if version <= len(self.recorded):
            return self.at(version - 1)
        event = self.emitted[version - 1]
        if event is None:  # written by this session, let go of where its flight parked
            self.fill()
            event = self.emitted[version - 1]
            assert event is not None
        return event

    def since(self, index: int) -> list[Event]:
        """The events emitted from `index` (0-based) on, read back only where the slice
        reaches into the gap: a scan of what is new costs what is new."""
        gap = self.gap
        if gap is not None and index < gap[1] and len(self.emitted) > gap[0]:
            self.fill()
        return cast(list[Event], self.emitted[index:])

    def present(self) -> list[Event | None]:
        """The record without the places in the gap: a scan of it costs what was read."""
        if self.gap is None:
            return self.recorded
        a, b = self.gap
        return self.recorded[:a] + self.recorded[b:]

    def fill(self) -> None:
        """Read the places in the gap back: somebody wants the whole record."""
        if self.gap is None:
            return
        a, b = self.gap
        missing = [r.event for r in read_between(self.source, self.stream, a, b)]
        if len(missing) != b - a:
            raise ReplayDivergence(a + 1, None, f"{len(missing)} of {b - a} events read back")
        self.gap = None
        recorded = min(b, len(self.recorded))  # the gap may reach past the record (`trim`)
        if recorded > a:
            self.recorded[a:recorded] = missing[: recorded - a]
        for i in range(a, min(b, len(self.emitted))):
            if self.emitted[i] is None:
                self.emitted[i] = missing[i - a]
        if self.on_fill is not None:
            self.on_fill()

    def trim(self, keep: int) -> None:
        """Let go of all but the newest `keep` events emitted (and the record's places before
        them): the gap grows to run from the stream's start, one range as ever."""
        end = len(self.emitted) - keep
        a, b = self.gap if self.gap is not None else (0, 0)
        if end <= b and a == 0:
            return  # nothing new to let go of
        end = max(end, b)
        for i in [*range(0, a), *range(b, end)]:
            self.emitted[i] = None
            if i < len(self.recorded):
                self.recorded[i] = None
        self.gap = (0, end)
