"""How a run is driven, in two streams beside the run's own:

    lease-<run>    who may drive it: the lease primitive of runtime/coordination/leases.py
                   (LeaseGranted / LeaseRenewed / LeaseReleased; journals from before it hold
                   DriverLeased / DriverReleased, still read). The version of a grant is its
                   epoch, and every append to the run is fenced by it. A heartbeat renews it
                   while a step runs, so a short lease covers a long step and a dead worker's
                   lease runs out in seconds.
    control-<run>  what people asked of it (stop, resume), failed steps, and work dead-lettered
                   outside the harness (a step that crashes its worker or keeps raising).

The run's own stream holds what the run did. Keeping the driving apart means a resumed or
replayed run never meets a lease or a request in its record, and a stop requested mid-step
does not move the lease's epoch.
"""

from __future__ import annotations

import functools
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.db import OperationalError, connections

from journal_store.journal import DjangoJournal
from runtime import streams
from runtime.coordination import holding
from runtime.coordination.heartbeat import Heartbeat
from runtime.coordination.leases import Lease, Leases, standing
from runtime.events import (
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    ErrorInfo,
    Event,
    EventFormatError,
    ResumeRequested,
    RunStalled,
    StepFailed,
    StopRequested,
)
from runtime.faults import Faults
from runtime.fenced import Fenced
from runtime.journal import Fence, Recorded, StaleEpoch, WrongExpectedVersion
from runtime.model import EndpointDown
from runtime.stops import StopRequest
from services import parking, redacted


class Control:
    def __init__(self, run_id: str, journal: DjangoJournal | None = None) -> None:
        self.run_id = run_id
        self.journal = journal or DjangoJournal()
        self.stream = streams.control(run_id)
        self.lease_stream = streams.driver_lease(run_id)
        self.leases = Leases(self.journal, run_id)  # its resource is the run id: lease-<run>

    def events(self) -> list[Event]:
        return [r.event for r in self.journal.read(self.stream)]

    # Each question a step asks is one of these seeks by the (run, kind, position) index: the
    # stream grows by every failure, stall, request and letter the run has had, and read
    # whole, a step of a long run with a flaky endpoint paid for all of them.

    def latest(self, kind: type[Event]) -> Recorded | None:
        """The control stream's last event of `kind`, or None."""
        found = self.journal.select(
            "WHERE run_id = %s AND kind = %s AND stream = %s ORDER BY position DESC LIMIT 1",
            [self.run_id, kind.__name__, self.stream],
        )
        return found[0] if found else None

    def since(self, kind: type[Event], after: int) -> list[Recorded]:
        """The control stream's events of `kind` at positions after `after`, in order."""
        return self.journal.select(
            "WHERE run_id = %s AND kind = %s AND stream = %s AND position > %s ORDER BY position",
            [self.run_id, kind.__name__, self.stream, after],
        )

    def latest_of(self, *kinds: type[Event]) -> Recorded | None:
        """The latest of the control stream's events of these kinds, or None."""
        found = [r for r in (self.latest(k) for k in kinds) if r is not None]
        return max(found, key=lambda r: r.position) if found else None

    def append(self, event: Event) -> None:
        self.journal.append(self.stream, [event], self.journal.version(self.stream))

    # --- driving -----------------------------------------------------------------------------

    def acquire(
        self, holder: str, ttl: float, at_version: int, sent: int | None = None
    ) -> Lease | None:
        """The right to drive one step, or None while somebody else's lease is live (or, with
        `sent`, once a step has taken the run since the lease stream's version `sent`). The
        lease counts the step's starts (`attempt`) since a person last retried a dead letter."""
        return self.leases.acquire(
            self.run_id, holder, ttl, at_version=at_version, since=self.retried_at(), sent=sent
        )

    def sent_at(self) -> int:
        """The lease stream's version, which a message asking for the run's next step carries
        (`acquire`'s `sent`)."""
        return self.journal.version(self.lease_stream)

    def release(self, lease: Lease, outcome: str) -> bool:
        """Give the lease back, unless somebody took it over (then it is theirs to release:
        False). A step that ended "waiting" (on specialists elsewhere) did its part: the next
        look at the same version is not a retry of a step that kept dying."""
        return self.leases.release(lease, outcome, counted=outcome != "waiting")

    def retried_at(self) -> int:
        """The position of the last dead-letter retry a person ordered here (0: none)."""
        retried = self.latest(DeadLetterRetried)
        return retried.position if retried else 0

    def last_error(self, at_version: int) -> str:
        # A step at `at_version` fails after the run's stream reached that version: read the
        # failures since, not every one the run has had.
        reached = self.journal.select(
            "WHERE stream = %s AND version = %s", [streams.journal(self.run_id), at_version]
        )
        after = reached[0].position if reached else 0
        failures = [
            r.event
            for r in self.since(StepFailed, after)
            if isinstance(r.event, StepFailed) and r.event.at_version == at_version
        ]
        if not failures:
            return ""
        return str(failures[-1].error)

    def failing(self) -> Failing | None:
        """The failed steps since the run last moved (its stream's latest event) or a person
        last retried its dead letter; None when a step has gone through since. Two seeks and
        the failures since the later of them."""
        head = self.journal.last(streams.journal(self.run_id))
        moved = max(head.position if head else 0, self.retried_at())
        failed = [r.event for r in self.since(StepFailed, moved) if isinstance(r.event, StepFailed)]
        if not failed:
            return None
        last = failed[-1].error
        return Failing(
            since=failed[0].t,
            tries=len(failed),
            last_error=str(last),
            outage=all(e.error.type == EndpointDown.__name__ for e in failed),
        )

    def step_failed(self, at_version: int, exc: BaseException, fence: Fence) -> bool:
        """Record that the step at `at_version` failed, if the lease it ran under (`fence`)
        still stands; False when it was taken over. The failure of a step that no longer
        drives the run (often made by the takeover: the workspace or the stream changed under
        it) is not the run's: recorded, it made the run read as failing while another worker
        drove it."""
        # What a model client or a tool put in the exception (an echoed header, a URL's
        # password) would be shown on the run page, in its dead letter and in its export.
        error = ErrorInfo(type=type(exc).__name__, message=redacted.recorded(str(exc))[:2000])
        failed = StepFailed(run_id=self.run_id, at_version=at_version, error=error)
        try:
            self.journal.append(self.stream, [failed], self.journal.version(self.stream), fence)
        except StaleEpoch:
            return False
        return True

    # --- what people asked -------------------------------------------------------------------

    def stop_request(self) -> StopRequest | None:
        """The pending stop, if the latest request is a stop (a resume cancels it)."""
        latest = self.latest_of(StopRequested, ResumeRequested)
        e = latest.event if latest else None
        return StopRequest(by=e.by, reason=e.reason) if isinstance(e, StopRequested) else None

    def resumed_by(self) -> str:
        latest = self.latest(ResumeRequested)
        return (
            latest.event.by if latest and isinstance(latest.event, ResumeRequested) else "operator"
        )

    def request_stop(self, by: str, reason: str, at: int | None = None) -> None:
        self.ask(StopRequested(run_id=self.run_id, by=by, reason=reason), at)

    def request_resume(self, by: str, reason: str = "", at: int | None = None) -> None:
        self.ask(ResumeRequested(run_id=self.run_id, by=by, reason=reason), at)

    def ask(self, request: Event, at: int | None) -> None:
        """Append a person's request; `at`: the version of the control stream the decision to
        ask was taken on (`requests`), so WrongExpectedVersion when anything came in between
        (another person's stop or resume: two resumes at once record one)."""
        if at is None:
            self.append(request)
        else:
            self.journal.append(self.stream, [request], at)

    def requests(self) -> tuple[Recorded | None, int]:
        """The latest stop or resume asked of the run (None: none), and the control stream's
        version it was read at."""
        # The version first, then the request: one appended between the two is read again,
        # never taken as the latest at a version from before it.
        while True:
            version = self.journal.version(self.stream)
            latest = self.latest_of(StopRequested, ResumeRequested)
            if latest is None or latest.version <= version:
                return latest, version

    def resume_on_its_way(self, request: Recorded, interrupted: bool) -> bool:
        """Whether the resume asked in `request` is still to be taken up: no step has taken
        the run since it was asked (an interrupted run: none has yet written its RunResumed,
        or one holds its lease doing so), and it was asked (or its step last let go of the
        lease) no longer than STALL_SECONDS ago; past that its step is taken to be lost, and
        a resume may be asked again, as of a stalled run."""
        now = time.time()
        state = standing(lasts([self.lease_stream]).get(self.lease_stream))
        if state is not None and state.position > request.position:
            if not interrupted:
                return False  # a step took the running run since: the resume was taken up
            if not state.released and state.expires >= now:
                return True  # a step is taking the run up now (replaying to its stop)
        since = max(request.event.t, state.t if state is not None else 0.0)
        return now - since <= settings.STALL_SECONDS

    # --- stalls ---------------------------------------------------------------------------------

    def note_stall(self, since: float, attempts: int = 3) -> RunStalled | None:
        """Record that the run has been stalled since `since` (control.stalled), with why, as
        its lease's last record tells; once per stall: None when this one is noted already,
        or when people's requests kept moving the control stream under every attempt (the
        reconciler notes it at its next beat)."""
        version = self.journal.version(self.lease_stream)
        last = self.journal.read(self.lease_stream, after=version - 1) if version else []
        state = standing(last[-1] if last else None)
        expired = state is not None and not state.released
        stall = RunStalled(
            run_id=self.run_id,
            since=since,
            why="lease expired" if expired else "no step came",
            holder=state.holder if state is not None else "",
            outcome=(state.outcome or "") if state is not None and state.released else "",
        )
        for _ in range(attempts):
            # The version before the last stall: a stall noted between the two reads makes
            # the append below fail and be read again, never noted twice.
            version = self.journal.version(self.stream)
            noted = self.latest(RunStalled)
            if noted and isinstance(noted.event, RunStalled) and noted.event.since == since:
                return None
            try:
                # At the version just read: a stop or a failed step appended meanwhile is read
                # again before this stall is noted, never overwritten nor noted twice.
                self.journal.append(self.stream, [stall], version)
            except WrongExpectedVersion:
                continue
            return stall
        return None

    # --- dead letters outside the harness ------------------------------------------------------

    def open_letter(self) -> DeadLettered | None:
        """The control stream's dead letter nobody has decided on yet (of the rows that read:
        see `parked_on`)."""
        return self.parked_on()[0]

    def parked_on(self) -> tuple[DeadLettered | None, EventFormatError | None]:
        """What parks the run in its control stream: the dead letter nobody has decided on yet,
        read from the rows that read, and the error of the latest row no event model reads
        written after that letter (with none open, anywhere in the stream); None for either
        when there is none. Such a row may be a stop, or a decision on a letter: what decides
        whether the run is driven at all, so no step reads past it."""
        return parking.parked_on(self.journal, self.stream)  # folded as the stream grows

    def discarded(self) -> DeadLetterDiscarded | None:
        latest = self.latest_of(DeadLetterDiscarded, DeadLetterRetried)
        e = latest.event if latest else None
        return e if isinstance(e, DeadLetterDiscarded) else None

    def dead_letter(
        self, reason: str, attempts: int, last_error: str, fence: Fence | None = None
    ) -> DeadLettered:
        """Park the run's step for a person; with `fence`, only while that lease stands
        (StaleEpoch otherwise)."""
        # Counted by the rows' kind, not read: a row of the stream no event model reads must
        # not stop the letter that names it (services/steps.py parked).
        with self.journal.connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM journal_event WHERE stream = %s AND kind = %s",
                [self.stream, DeadLettered.kind],
            )
            (count,) = cursor.fetchone()
        letter = DeadLettered(
            run_id=self.run_id,
            letter_id=f"{self.run_id}:control:{count + 1}",
            reason=reason,
            attempts=attempts,
            last_error=last_error,
        )
        self.journal.append(self.stream, [letter], self.journal.version(self.stream), fence)
        return letter


@dataclass(frozen=True)
class Failing:
    """The steps of a run that failed since it last moved: the run stands where it stood."""

    since: float  # when the first of them failed
    tries: int
    last_error: str  # "Type: message" of the latest
    outage: bool  # every one of them was the model endpoint not answering

    def waits_out(self, now: float, patience: float) -> bool:
        """Whether the step is still tried again (an outage within its patience) rather than
        dead-lettered after its attempts."""
        return self.outage and now - self.since < patience


def holder() -> str:
    """This process's name as a lease holder: host and pid (a task adds its delivery id)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def faults() -> Faults:
    """The crash-test seams this worker was started with (settings.FAULT, EXEC_LOG): read once
    per value, not on every step."""
    return _parsed(settings.FAULT, settings.EXEC_LOG or None)


@functools.lru_cache(maxsize=4)
def _parsed(spec: str, log: str | None) -> Faults:
    return Faults.parse(spec, log)


def heartbeat(leases: Leases, *held: Lease, writer: Fenced | None = None) -> Heartbeat:
    """Renew these leases whenever a third of STEP_LEASE_SECONDS has run, from a thread of this
    process until `stop()` (runtime/coordination/holding.py: a lease lost gives up `writer` and
    ends the holder's children; one overdue holds them until its renewal answers). The
    database busy for a moment is renewed again soon; the renewing thread closes its own
    database connection as it ends."""
    return holding.heartbeat(
        leases,
        *held,
        ttl=settings.STEP_LEASE_SECONDS,
        writer=writer,
        transient=(OperationalError,),
        on_exit=connections.close_all,
    )


# --- runs nobody is driving ---------------------------------------------------------------------


def stalled(started: Mapping[str, float], now: float | None = None) -> dict[str, float]:
    """Of these running runs (id -> start time), those that nobody drives and no step is on its
    way to, each with the time it has been stalled since.

    A run is stalled when its last lease expired (the worker driving it died), or when its
    lease was given back (or never taken) longer ago than STALL_SECONDS without anybody taking
    it again (the next step's message was lost, or no worker is running). Two queries for any
    number of runs: the list page asks about all its running rows at once.
    """
    if not started:
        return {}
    now = time.time() if now is None else now
    grace = settings.STALL_SECONDS
    leases = {streams.driver_lease(run_id): run_id for run_id in started}
    last = {leases[stream]: record for stream, record in lasts(list(leases)).items()}
    found = {}
    for run_id, start in started.items():
        state = standing(last.get(run_id))
        if state is None:
            if now - start > grace:
                found[run_id] = start
        elif not state.released:
            # Held: stalled the moment it expires (its holder stopped renewing: it died), with
            # no grace on top; a live holder's heartbeat keeps pushing `expires` on.
            if state.expires < now:
                found[run_id] = state.expires
        elif now - state.t > grace:
            found[run_id] = state.t
    return found


def lasts(names: list[str]) -> dict[str, Recorded]:
    """The last record of each of these streams that has one that reads: two queries however
    many streams and however long they are (the highest version by the (stream, version)
    index, then those rows)."""
    if not names:
        return {}
    journal = DjangoJournal()
    marks = ", ".join(["%s"] * len(names))
    with journal.connection.cursor() as cursor:
        cursor.execute(
            f"SELECT stream, MAX(version) FROM journal_event WHERE stream IN ({marks}) "
            "GROUP BY stream",
            names,
        )
        latest = cursor.fetchall()
    if not latest:
        return {}
    where = " OR ".join(["(stream = %s AND version = %s)"] * len(latest))
    params = [value for pair in latest for value in pair]
    found = {}
    # A row no event model reads is left out, as a stream with no record: one run's such row
    # raised out of the stall sweep's round for every run. The step sent for it parks it in a
    # dead letter naming the row (services/steps.py).
    for record in journal.readings(f"WHERE {where}", params).records:
        found[record.stream] = record
    return found


def failing_steps(run_ids: list[str]) -> dict[str, StepFailed]:
    """Of these runs, those whose steps are failing, each with its latest failure: a failed
    step written after its own stream last moved and after a person last retried its dead
    letter, as `Control.failing` decides for one run (requests and stalls noted since do not
    hide it). Three queries for any number of runs, each a seek by an index: the heads of the
    runs' streams, the latest failure and retry in each control stream, those failures."""
    if not run_ids:
        return {}
    heads = lasts([streams.journal(r) for r in run_ids])
    controls = [streams.control(r) for r in run_ids]
    journal = DjangoJournal()
    runs = ", ".join(["%s"] * len(run_ids))
    names = ", ".join(["%s"] * len(controls))
    with journal.connection.cursor() as cursor:
        cursor.execute(
            "SELECT run_id, kind, MAX(position) FROM journal_event "
            f"WHERE run_id IN ({runs}) AND kind IN (%s, %s) AND stream IN ({names}) "
            "GROUP BY run_id, kind",
            [*run_ids, StepFailed.__name__, DeadLetterRetried.__name__, *controls],
        )
        latest = {(run_id, kind): position for run_id, kind, position in cursor.fetchall()}
    wanted = []
    for run_id in run_ids:
        failed = latest.get((run_id, StepFailed.__name__))
        head = heads.get(streams.journal(run_id))
        retried = latest.get((run_id, DeadLetterRetried.__name__), 0)
        moved = max(head.position if head else 0, retried)
        if failed is not None and failed > moved:
            wanted.append(failed)
    if not wanted:
        return {}
    marks = ", ".join(["%s"] * len(wanted))
    found = journal.select(f"WHERE position IN ({marks})", wanted)
    return {r.event.run_id: r.event for r in found if isinstance(r.event, StepFailed)}
