"""Deadlines on awaited replies: a clock in turns and seconds, read from the journal.

A REQUEST that expects a reply gets a `Deadline`; the recipient's run checks it at the top of
each of its turns (`Due.check`, passed to `runtime.loop.run`). It is missed when the recipient
has taken `turns` turns without reporting, or when more than `seconds` passed between the
REQUEST and the recipient's latest event. Both ends of that interval are journalled times (the
`t` the journal holds for each event), so the clock is the journal's, not the process's.

The decision is journalled too (ReplyOverdue, where the run stops): a resumed or replayed run
meets it at the same place and reads it back instead of measuring again. A replay never looks
at a clock, and a journal written before deadlines existed, which holds no decision, replays as
it was written. An agent present but silent (it keeps calling tools, or answers nothing) and an
agent absent thus take one path: no report, re-asked once, then escalated.

The clock is looked at between turns: a model call that hangs is noticed when it returns. Time
the run stood still because a person stopped it (RunInterrupted to RunResumed), or between a
parent's event and a fork made from it (RunForked), does not count;
a crash's downtime, which no event marks, does, once the resumed run journals again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runtime.events import ReplyOverdue, RunForked, RunInterrupted, RunResumed
from runtime.session import Session


@dataclass(frozen=True)
class Deadline:
    """How long an awaited reply may take, in the recipient's turns and in seconds (None: no
    limit of that kind)."""

    turns: int | None = None
    seconds: float | None = None

    def __post_init__(self) -> None:
        if self.turns is not None and self.turns < 1:
            raise ValueError("a deadline in turns needs at least one turn")
        if self.seconds is not None and self.seconds <= 0:
            raise ValueError("a deadline in seconds must be above 0")


def journalled_at(session: Session, index: int) -> float:
    """When the session's `index`-th event was journalled: the record's time for an event the
    record already held (a resumed or replayed one is re-made with a new `t`), else its own."""
    return session.record.stored(index + 1).t


@dataclass(eq=False)
class Due:
    """One request's deadline: who is awaited, on which REQUEST (its message id and its place
    among the session's events), and the limits. Called with the turn, it is the agent loop's
    `deadline` (runtime/loop.py), and it keeps what a loop snapshot needs (`Kept`).

    The time a person held the run stopped is summed as the events go by, each read once: a
    check costs the events since the last one, not the reply's length, and a loop resumed from
    a snapshot does not read back the turns it skipped."""

    session: Session
    awaited: str
    task_id: str
    request: str
    sent_at: int  # index in session.emitted of the REQUEST's MessageSent
    deadline: Deadline
    # The scan so far: the next index to read, the seconds paused before it, and when a stop
    # still open at it began (a RunInterrupted not yet followed by RunResumed).
    scanned: int = field(init=False)
    paused: float = field(init=False, default=0.0)
    stopped_at: float | None = field(init=False, default=None)
    # When the REQUEST was journalled, read once: a flight parked between steps may let go of
    # old events (Session.trim), and this one would be read back at every check.
    sent_t: float | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.scanned = self.sent_at

    def __call__(self, turn: int) -> ReplyOverdue | None:
        return self.check(turn)

    def check(self, turn: int) -> ReplyOverdue | None:
        """At the top of the recipient's turn `turn` (0-based): the ReplyOverdue that ends its
        run, or None while it is in time. In the record: what the record decided here."""
        session = self.session
        recorded = session.peek()
        if isinstance(recorded, ReplyOverdue):
            session.emit(recorded)
            return recorded
        if not session.live:
            return None
        elapsed = self.elapsed()
        limit = self.deadline
        reason = ""
        if limit.turns is not None and turn >= limit.turns:
            reason = (
                f"{self.awaited} took {turn} turns without a reply (the deadline is {limit.turns})"
            )
        elif limit.seconds is not None and elapsed > limit.seconds:
            reason = (
                f"{self.awaited} gave no reply within {limit.seconds:g} s "
                f"({elapsed:.1f} s since the request, as journalled)"
            )
        if not reason:
            return None
        event = session.new(
            ReplyOverdue,
            agent=self.awaited,
            task_id=self.task_id,
            awaited=self.awaited,
            request=self.request,
            turns=turn,
            elapsed=round(elapsed, 3),
            max_turns=limit.turns,
            max_seconds=limit.seconds,
            reason=reason,
        )
        session.emit(event)
        return event

    def elapsed(self) -> float:
        """Seconds between the REQUEST and the session's latest event, by journalled times,
        less the time a person held the run stopped."""
        self._scan()
        session = self.session
        if self.sent_t is None:
            self.sent_t = journalled_at(session, self.sent_at)
        last = session.position - 1
        return journalled_at(session, last) - self.sent_t - self.paused

    def _scan(self) -> None:
        """Sum the stops in the events emitted since the last scan."""
        session = self.session
        at = self.scanned
        for index, event in enumerate(session.record.since(at), start=at):
            if isinstance(event, RunForked) and index > self.sent_at:
                # The parent's event before it, and the fork made later: not the agent's time.
                self.paused += journalled_at(session, index) - journalled_at(session, index - 1)
            elif isinstance(event, RunInterrupted):
                self.stopped_at = journalled_at(session, index)
            elif isinstance(event, RunResumed) and self.stopped_at is not None:
                self.paused += journalled_at(session, index) - self.stopped_at
                self.stopped_at = None
        self.scanned = max(at, session.position)

    # --- Kept: what a loop snapshot carries (runtime/loop.py) ---------------------------------

    def keep(self) -> dict[str, Any]:
        self._scan()  # to the snapshot's place: a resume from it reads nothing before it
        return {
            "request": self.request,
            "sent_at": self.sent_at,
            "limits": [self.deadline.turns, self.deadline.seconds],
            "scanned": self.scanned,
            "paused": self.paused,
            "stopped_at": self.stopped_at,
        }

    def fits(self, state: Any) -> bool:
        return (
            isinstance(state, dict)
            and state.get("request") == self.request
            and state.get("sent_at") == self.sent_at
            and state.get("limits") == [self.deadline.turns, self.deadline.seconds]
            and isinstance(state.get("scanned"), int)
            and state["scanned"] >= self.scanned
            and isinstance(state.get("paused"), int | float)
            and isinstance(state.get("stopped_at"), int | float | None)
        )

    def take(self, state: dict[str, Any]) -> None:
        self.scanned = state["scanned"]
        self.paused = float(state["paused"])
        self.stopped_at = state["stopped_at"]
