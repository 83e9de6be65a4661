"""What an effect's stream (`effect-<key>`) holds, and its state read from it: its EffectStarted,
then any EffectResumed (a taking over), then at most one outcome; only a failure sent again is
followed (by an EffectResumed, then as before). The ledger (runtime/coordination/effects.py)
reads it to decide who performs an effect, the reconciler (runtime/coordination/reconciler.py)
to find those in flight, and a harness to read what became of one."""

from __future__ import annotations

from dataclasses import dataclass

from runtime.events import EffectFailed, EffectResumed, EffectStarted, EffectSucceeded, Event
from runtime.journal import Journal, last_record, read_between

Outcome = EffectSucceeded | EffectFailed
Taking = EffectStarted | EffectResumed  # who holds an effect unsettled, under which fence


def outcome_of(recorded: list[Event]) -> Outcome | None:
    """An effect's outcome: the last of its records when settled (EffectStarted, then any
    EffectResumed, then at most one outcome), else None."""
    last = recorded[-1] if recorded else None
    return last if isinstance(last, EffectSucceeded | EffectFailed) else None


def holder_of(recorded: list[Event]) -> Taking | None:
    """The latest taking of an unsettled effect: its EffectStarted or last EffectResumed."""
    for event in reversed(recorded):
        if isinstance(event, EffectStarted | EffectResumed):
            return event
    return None


@dataclass(frozen=True)
class Seen:
    """What the ledger reads of an effect's stream to learn its state: two records, never the
    whole stream. The first is the EffectStarted, whose request hash says which request the key
    is for; the last is the outcome when settled, else the latest taking. A stream holds its
    start, then any EffectResumed, then at most one outcome, and only a failure sent again is
    followed (by an EffectResumed, then as before: every append goes at the version read), so
    the last record says all the rest would."""

    first: Event
    last: Event
    version: int  # the last record's: a taking over goes after it

    @property
    def outcome(self) -> Outcome | None:
        return outcome_of([self.last])

    @property
    def holder(self) -> Taking | None:
        return holder_of([self.last])


def seen(journal: Journal, stream: str) -> Seen | None:
    """The first and last records of an effect's stream (None: never started). The last is
    read first: the first record never changes, so the two are what one read would have said."""
    last = last_record(journal, stream)
    if last is None:
        return None
    first = last if last.version == 1 else read_between(journal, stream, 0, 1)[0]
    return Seen(first.event, last.event, last.version)
