"""Driving runs step by step: leases, failed steps, people's stop and resume, ceilings."""

from __future__ import annotations

from typing import ClassVar, Literal

from runtime.events.base import ErrorInfo, Event
from runtime.events.times import Instant

# --- driving a run step by step (the control stream `control-<run>`) ------------------------


# Read, never written any more: journals from before the one lease primitive hold these in
# `lease-<run>`. The driver's lease is now a LeaseGranted like any other (resource: the run id);
# runtime/coordination/leases.py reads these as a grant and a release, and counts a step's
# attempts over them the way they were counted when they were written.


class DriverLeased(Event):
    """A worker took the right to drive the run for one step. The stream version of this event
    is the lease's epoch: appends to the run carry it, and a stale epoch cannot write."""

    kind: ClassVar[str] = "DriverLeased"
    holder: str
    expires: Instant
    at_version: int  # the run stream's version when the step began (attempts are counted by it)


class DriverReleased(Event):
    kind: ClassVar[str] = "DriverReleased"
    holder: str
    outcome: str


class StepFailed(Event):
    """A step raised instead of finishing; counted towards dead-lettering."""

    kind: ClassVar[str] = "StepFailed"
    at_version: int
    error: ErrorInfo


class StopRequested(Event):
    """A person asked the run to stop at its next turn boundary."""

    kind: ClassVar[str] = "StopRequested"
    by: str
    reason: str = ""


class ResumeRequested(Event):
    kind: ClassVar[str] = "ResumeRequested"
    by: str
    reason: str = ""


class JournalImported(Event):
    """The run was read from a file here, not flown here: which file, and who imported it (the
    event's `t` says when). Recorded by this server beside the run (`import-<run>`), never
    taken from a file and never exported: it is this store's note, not the run's record."""

    kind: ClassVar[str] = "JournalImported"
    file: str
    by: str | None = None


class CeilingReached(Event):
    """A hard ceiling outside the agents ended the run: tokens, turns or wall-clock seconds."""

    kind: ClassVar[str] = "CeilingReached"
    ceiling: Literal["tokens", "turns", "seconds"]
    limit: float
    value: float


class RunStalled(Event):
    """The reconciler found the run stalled and queued it again: nobody drives it and no step
    is on its way to it. Recorded once per stall (`since` names it), in the run's control
    stream; the next lease taken on the run ends it."""

    kind: ClassVar[str] = "RunStalled"
    since: Instant  # when the run stopped being driven: its lease ran out, or was given back
    why: Literal["lease expired", "no step came"]
    holder: str = ""  # the lease's last holder ("": nobody ever took it)
    outcome: str = ""  # how that holder's step ended, when it gave the lease back
