"""A turn boundary: where a step ends, a run's ceilings are checked, and an operator's stop is
honoured (and resumed past). Each decision taken here live is journalled, so a resumed or
replayed run takes it again at the same place.
"""

from __future__ import annotations

import time

from runtime.events import CeilingReached, RunInterrupted, RunResumed
from runtime.session import Session
from runtime.stops import CeilingBreached, Interrupted, StepComplete


def boundary(session: Session) -> None:
    """Called by an agent loop or a harness between its turns (see the module docstring)."""
    recorded = session.peek()
    if isinstance(recorded, RunInterrupted):
        session.emit(recorded)
        after = session.peek()
        if isinstance(after, RunResumed):
            session.emit(after)
        else:
            session.require_live()
            session.emit(session.new(RunResumed, by=session.resumed_by))
        return
    if isinstance(recorded, CeilingReached):
        session.emit(recorded)
        raise CeilingBreached(recorded)
    if not session.live:
        return
    if step_used(session):
        session.flush()  # the step ends here: what it did is written before it
        if session.pause is None:
            raise StepComplete()
        session.trim()  # what a parked flight holds does not grow with the run
        session.pause()  # a warm flight waits here for its next step (runtime/warm.py)
    session.live_turns += 1
    check_ceilings(session)
    request = session.stop() if session.stop is not None else None
    if request is not None:
        session.emit(session.new(RunInterrupted, by=request.by, reason=request.reason))
        raise Interrupted(request)


def step_used(session: Session) -> bool:
    """Whether this step's live turns are used up (one always starts)."""
    if session.steps is not None and session.live_turns >= session.steps:
        return True
    return (
        session.until is not None and session.live_turns > 0 and time.monotonic() >= session.until
    )


def check_ceilings(session: Session) -> None:
    """Stop the run, journalled, at the first of its ceilings (seconds, turns) it reached."""
    breach: tuple[str, float, float] | None = None
    elapsed = time.time() - session.started
    if session.ceilings.seconds is not None and elapsed > session.ceilings.seconds:
        breach = ("seconds", session.ceilings.seconds, round(elapsed, 3))
    turns = session.counts["ModelCalled"]
    if session.ceilings.turns is not None and turns >= session.ceilings.turns:
        breach = ("turns", session.ceilings.turns, turns)
    if breach is not None:
        event = session.new(CeilingReached, ceiling=breach[0], limit=breach[1], value=breach[2])
        session.emit(event)
        raise CeilingBreached(event)
