"""Whether a specialist that let go of its work undone is started again, when, and when its
sub-task is given up instead: read from the events of its lease alone.

Every start of a specialist is a grant of its lease (`lease-worker-...`, services/specialists.py).
A start that ended with the work undone gave the lease back, saying why in its outcome, or let
it run out (its worker died). The run's step that looks at the specialist (`engine.away`)
starts it again, up to MAX_RESTARTS times; then the sub-task has failed and recovery takes it
from there.

A start that ended because the specialist's model endpoint did not answer (its release's
outcome begins "EndpointDown") failed nothing of the specialist's own. Counted like a crash, a
vendor's five bad minutes burnt a sub-task's restarts in seconds and degraded the run for good.
So starts that meet such an outage do not count while they end within `Outages.window` of the
outage's first failed start (MINUTES_OUTAGE_SECONDS on the workers, as for the run's own step),
and the next start comes after a wait, by the rule a failed step of the run waits by
(runtime/backoff.py `doubling`, or longer when the endpoint's Retry-After asked for longer; at
most `Outages.longest`, which the workers keep within the reconciler's stall grace). Past the
window they count as any failed start. An outage is the latest starts in a row that met the
endpoint down: a start that ended otherwise ends it, as a step that goes through ends a run's
(services/control.py `Failing`). The sub-task's deadline is checked before any of this, and
wins.

Whether a sub-task is given up, and the reason given, read only the lease's events, their times
and the host's settings, so a step that resumes the run from its journal decides what the live
one decided. Only when to start it again reads the clock, and nothing of that is journalled.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from runtime.backoff import doubling
from runtime.events import Event, LeaseGranted, LeaseReleased
from runtime.instants import clock
from runtime.model import EndpointDown

MAX_RESTARTS = 2  # a specialist that fails is started again at most this many times (counted)
# How a release's outcome begins when the model endpoint did not answer (services/specialists.py)
DOWN = EndpointDown.__name__


@dataclass(frozen=True)
class Outages:
    """How a host waits out a specialist's model endpoint being down: for `window` seconds from
    the outage's first failed start (0: not at all, such a start counts as any failed one), at
    most `longest` seconds between starts."""

    window: float = 0.0
    longest: float = 60.0


@dataclass(frozen=True)
class Restarts:
    """A specialist's starts as its lease records them, and what they mean for the next one."""

    starts: int  # every grant of the lease
    waited: int  # starts that met an outage within the window: they do not count
    outage: float | None  # when the outage the latest starts met began; None: the last did not
    last: str  # what the latest release said became of the work
    again_at: float  # the time the next start may come (0: at once)

    @property
    def counted(self) -> int:
        return self.starts - self.waited

    @property
    def given_up(self) -> bool:
        return self.counted > MAX_RESTARTS

    def why(self) -> str:
        """The reason of a sub-task given up: what a person reads on its dead letter."""
        if self.outage is not None:
            said = f"its model endpoint has not answered since {clock(self.outage)}"
        else:
            said = "the specialist kept failing"
        notes = [f"{self.waited} of them waited out its model endpoint"] if self.waited else []
        if self.last:
            notes.append(f"the last time: {self.last}")
        why = f"gave up after {self.starts} starts: {said}"
        return f"{why} ({'; '.join(notes)})" if notes else why


def tally(lease: list[Event], outages: Outages) -> Restarts:
    """The starts of a specialist whose lease is `lease`'s events, and what they mean."""
    starts = waited = 0
    outage: float | None = None  # when the current outage's first failed start ended
    in_outage = 0  # its starts that were waited out: the doubling's attempt
    held = False  # a start holds the lease (a grant with no release after it yet)
    last, again_at, resource = "", 0.0, ""
    for e in lease:
        if isinstance(e, LeaseGranted):
            if held:  # the start before let the lease run out (its worker died): no outage
                outage, in_outage, again_at = None, 0, 0.0
            starts += 1
            held, resource = True, e.resource
        elif isinstance(e, LeaseReleased):
            held, last, again_at = False, e.outcome, 0.0
            if not e.outcome.startswith(DOWN):
                outage, in_outage = None, 0
                continue
            outage = e.t if outage is None else outage
            if e.t - outage < outages.window:
                waited += 1
                in_outage += 1
                # Seeded by the lease and the start, so that every look at it finds the same
                # wait, and specialists that failed together do not all come back together.
                jitter = random.Random(f"{resource}#{starts}")
                wait = doubling(in_outage, outages.longest, jitter)
                # No sooner than the endpoint asked (its Retry-After, as the run's own step
                # honours it), within the same longest wait.
                asked = min(outages.longest, e.retry_after or 0.0)
                again_at = e.t + max(wait, asked)
    return Restarts(starts, waited, outage, last, again_at)
