"""Livelock: agents busy reacting to each other while the goal does not move (seed 02 §22).

No agent is blocked, so no deadline or deadlock says anything. Progress is measured from the
journal instead, by three signals, each counted per thing it is about:

    reopened     a task closed (integrated, or its commitment released as fulfilled) is asked
                 for again (a REQUEST on it)
    oscillating  a fact goes back to a value it held before (A, B, A)
    conflict     the same conflict met again: a conflict parked on the same fact, work refused
                 at the same gate for the same thing

A thing whose signal repeats `LIMIT` times is a livelock. `Signals` is a fold (a small JSON
state) that the `livelock` finding steps too, so the finding shows on journals written before
LivelockDetected existed. `Watch` is the harness's: at a boundary it feeds the run's events
(and the fact changes it looked at) through the same signals, and the first thing over the
limit is journalled as LivelockDetected, where the harness stops the loop. Fact changes live in
their subjects' streams, outside the run, so a resumed or replayed run reads the recorded
decision back instead of looking again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from runtime.events import (
    CommitmentReleased,
    ConflictParked,
    Event,
    FactChanged,
    Integrated,
    LivelockDetected,
    MessageSent,
    StaleWorkRejected,
)
from runtime.session import Session

LIMIT = 2  # repeats of one signal on one thing that make a livelock

Signal = dict[str, Any]  # {"signal", "key", "count", "detail"}


class Signals:
    """The three signals, counted per thing; `state` is JSON a fold can store."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        self.state: dict[str, Any] = (
            state if state is not None else {"closed": [], "facts": {}, "counts": {}}
        )

    def step(self, event: Event) -> Signal | None:
        """The signal this event gives, with its count so far, or None."""
        state = self.state
        task = event.task_id or "-"
        if isinstance(event, Integrated) or (
            isinstance(event, CommitmentReleased) and event.outcome == "fulfilled"
        ):
            if task != "-" and task not in state["closed"]:
                state["closed"].append(task)
            return None
        if isinstance(event, MessageSent) and event.performative.lower() == "request":
            if task not in state["closed"]:
                return None
            state["closed"].remove(task)
            return self.count("reopened", task, f"{task} was reopened after it was closed")
        if isinstance(event, FactChanged):
            fact = f"{event.subject}.{event.predicate}"
            value = json.dumps(event.value, sort_keys=True)
            seen: list[str] = state["facts"].setdefault(fact, [])
            back = bool(seen) and seen[-1] != value and value in seen[:-1]
            seen.append(value)
            del seen[:-4]  # a flip back is to a recent value: keep a few
            if not back:
                return None
            return self.count("oscillating", fact, f"{fact} went back to {value} (by {event.by})")
        if isinstance(event, ConflictParked):
            fact = f"{event.subject}.{event.predicate}"
            return self.count(
                "conflict", f"parked:{fact}", f"a {event.conflict_type} conflict on {fact} again"
            )
        if isinstance(event, StaleWorkRejected):
            return self.count(
                "conflict",
                f"{event.gate}:{event.what}",
                f"{event.what} refused at the {event.gate} gate again",
            )
        return None

    def count(self, signal: str, thing: str, detail: str) -> Signal | None:
        key = f"{signal}:{thing}"
        counts: dict[str, int] = self.state["counts"]
        counts[key] = counts.get(key, 0) + 1
        # a conflict met once is no signal: its repeats are
        repeats = counts[key] - 1 if signal == "conflict" else counts[key]
        if repeats < 1:
            return None
        return {"signal": signal, "key": key, "count": repeats, "detail": detail}


def things(escalated: list[str], found: list[str]) -> set[str]:
    """What livelocked, each thing once: the tasks escalated at the REJECT round cap, the tasks
    a livelock signal found reopened (a task's own id, so that one escalated, reopened or
    reviewed as well is still one task of the rate's part and of its whole), and the other
    things a signal found (a fact flipping back, a conflict met again), by their signal's key."""
    out = set(escalated)
    for key in found:
        signal, _, about = key.partition(":")
        out.add(about if signal == "reopened" else f"signal:{key}")
    return out


class Watch:
    """The harness's look for livelock at a boundary of its loop."""

    def __init__(self, session: Session, limit: int = LIMIT) -> None:
        if limit < 1:
            raise ValueError("a livelock needs at least one repeat")
        self.session = session
        self.limit = limit

    def check(self, looked_at: Iterable[Event] = ()) -> LivelockDetected | None:
        """The LivelockDetected (journalled) for the first thing over the limit not reported
        yet, from the run's events and `looked_at` (fact changes the harness read), or None."""
        s = self.session
        recorded = s.peek()
        if isinstance(recorded, LivelockDetected):
            s.emit(recorded)
            return recorded
        if not s.live:
            return None
        reported = {
            str(signal.get("key"))
            for e in s.record.since(0)
            if isinstance(e, LivelockDetected)
            for signal in e.signals
        }
        signals = Signals()
        latest: dict[str, Signal] = {}
        for event in [*s.record.since(0), *looked_at]:
            signal = signals.step(event)
            if signal is not None:
                latest[signal["key"]] = signal
        over = [
            sig for key, sig in latest.items() if sig["count"] >= self.limit and key not in reported
        ]
        if not over:
            return None
        detected = s.new(
            LivelockDetected,
            signals=over,
            limit=self.limit,
            reason="; ".join(f"{sig['detail']} ({sig['count']} times)" for sig in over)
            + ": no progress, the loop is stopped",
        )
        s.emit(detected)
        return detected


__all__ = ["LIMIT", "Signals", "Watch"]
