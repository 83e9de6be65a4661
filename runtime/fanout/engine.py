"""The fan-out engine: hand briefs to specialists, run them at once, collect their reports.

A team plans sub-tasks (each a `Handoff`) and says how one specialist runs (a `Specialist`:
from its own session, sub-task id and brief to a typed `Report`). The engine does the rest,
the same for every team:

    hand_off   journal the brief (WorkerHandedOff); where specialists run on other workers,
               send this one off, once
    fan_out    every specialist's report by its deadline: in threads of this process (at most
               `cap` at a time), or read back from the streams of specialists running elsewhere
    check      drop the findings a specialist's own tool results do not back
    replayed   what only a live run produces (timeouts, breaker trips): live, the events at
               hand; in a replay, what the record holds at that place

Each specialist writes to a stream of its own (`worker-<run>-<sub-task>-<worker>`) through a
sub-session, so a resumed or replayed run reads its work back instead of doing it again.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from runtime import streams
from runtime.coordination.gates import Leases
from runtime.events import (
    AgentFinished,
    BreakerTripped,
    BudgetExhausted,
    Event,
    LeaseClosed,
    LeaseGranted,
    LeaseReleased,
    ModelFailed,
    ReplyOverdue,
    RunInconclusive,
    StatusReported,
    TurnCapReached,
    WorkerHandedOff,
    WorkerTimedOut,
)
from runtime.fanout import restarts, verify
from runtime.fanout.contracts import Handoff, Reason, Report
from runtime.fanout.restarts import Outages
from runtime.fanout.routing import timeout_report
from runtime.fork_gaps import fork_gaps
from runtime.session import Session
from runtime.stops import Waiting

# One specialist, run (or read back) on its own session: always a typed report.
Specialist = Callable[[Session, str, Handoff], Report]
# Send a specialist off to run elsewhere: run id, sub-task id, its hand-off as JSON.
Dispatch = Callable[[str, str, dict[str, Any]], None]

STOPS = (
    AgentFinished,
    BudgetExhausted,
    TurnCapReached,
    RunInconclusive,
    ModelFailed,
    ReplyOverdue,
    BreakerTripped,  # in a specialist's own stream, only the loop breaker trips: its run ends
    StatusReported,  # the last word, journalled with the stop it follows
)
WAIT_SECONDS = 0.5  # how soon a step waiting on specialists elsewhere first looks again
# The longest between two looks at a specialist at work. Each look takes and gives back the
# run's lease (two events), so looking every half second at a specialist that works for ten
# minutes wrote 2,400 of them; a look a tenth of the time it has been out, at most this, notices
# it done within a tenth of its time (or this), and writes about a hundred.
LONGEST_LOOK = 5.0

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Crew:
    """How a run's specialists are run: the team's `run`, at most `cap` at once, and the
    host's ways: `dispatch` sends one to another worker (None: threads of this process), and
    `release` is what a specialist's thread calls when it ends (the workers close its database
    connection there); `outages`, how long a dispatched specialist's model endpoint being down
    is waited out (restarts.py)."""

    run: Specialist
    cap: int
    dispatch: Dispatch | None = None
    release: Callable[[], None] | None = None
    outages: Outages = field(default_factory=Outages)


def worker_stream(run_id: str, sub_id: str, worker_id: str) -> str:
    return streams.worker(run_id, sub_id, worker_id)


def starts(lease: list[Event]) -> int:
    """How many times a specialist was started: the grants of its lease."""
    return sum(1 for e in lease if isinstance(e, LeaseGranted))


def finished(events: list[Event]) -> bool:
    """Whether a specialist's stream holds a whole run (it stopped, one way or another)."""
    return bool(events) and isinstance(events[-1], STOPS)


def last_of(session: Session, stream: str) -> list[Event]:
    """The stream's last event (or none): all `finished` needs, read at every look at a
    specialist still at work without reading what it has written so far."""
    version = session.source.version(stream)
    return [r.event for r in session.source.read(stream, after=version - 1)] if version else []


def failed(handoff: Handoff, reason: Reason, steps: int, tokens: int, why: str) -> Report:
    """The report of a specialist that could not give one: failed, with its reason code."""
    return Report(
        worker_id=handoff.worker_id,
        status="failed",
        reason=reason,
        steps=steps,
        tokens=tokens,
        degraded=why,
    )


def replayed(session: Session, cls: tuple[type[Event], ...], live: list[Event]) -> None:
    """Emit what only a live run can produce (breaker trips, timeouts): live, the events at
    hand; on a replay, what the record holds at this place. A resumed run whose record ends
    here (a step ended at the next boundary) read them back: they are not emitted again."""
    read_back = False
    while not session.live and isinstance(session.peek(), cls):
        session.emit(session.peek())  # type: ignore[arg-type]
        read_back = True
    if session.live and live and not read_back:
        session.emit(*live)


def hand_off(session: Session, sub_id: str, handoff: Handoff, crew: Crew, attempt: int = 1) -> None:
    """Journal the brief; where specialists run elsewhere, send this one off once, when the
    brief is first written (a lost one misses its deadline, and recovery takes it from there)."""
    fresh = session.live
    session.emit(
        session.new(
            WorkerHandedOff,
            task_id=sub_id,
            handoff=handoff.model_dump(mode="json"),
            attempt=attempt,
        )
    )
    if fresh and crew.dispatch is not None:
        crew.dispatch(session.run_id, sub_id, handoff.model_dump(mode="json"))


def fan_out(session: Session, planned: list[tuple[str, Handoff]], crew: Crew) -> dict[str, Report]:
    """Every specialist's report, collected by its deadline: in threads here, or, where the
    crew dispatches them to other workers, from their streams. One that missed its deadline
    is reported failed on its budget (time is a budget too), and WorkerTimedOut says so."""
    recorded_timeouts = {
        e.task_id for e in session.recorded if isinstance(e, WorkerTimedOut) and e.task_id
    }
    reports: dict[str, Report] = {}
    timed_out: list[Event] = []
    todo = []
    for sub_id, handoff in planned:
        if sub_id in recorded_timeouts and not session.live:
            reports[sub_id] = timeout_report(handoff)
        else:
            todo.append((sub_id, handoff))
    gathered = away(session, todo, crew) if crew.dispatch is not None else here(session, todo, crew)
    for sub_id, report in gathered.items():
        if report is None:
            handoff = dict(todo)[sub_id]
            reports[sub_id] = timeout_report(handoff)
            timed_out.append(
                session.new(
                    WorkerTimedOut,
                    task_id=sub_id,
                    worker_id=handoff.worker_id,
                    deadline_seconds=handoff.deadline_seconds,
                    elapsed=round(time.time() - handed_at(session, sub_id), 3),
                )
            )
        else:
            reports[sub_id] = report
    replayed(session, (WorkerTimedOut,), timed_out)
    return {sub_id: reports[sub_id] for sub_id, _ in planned}


def handed_at(session: Session, sub_id: str) -> float:
    """When the sub-task's brief was handed over (its deadline counts from then), moved on by
    the time before each fork that came after it (runtime/fork_gaps.py): a specialist at work
    at a fork's point was timed out at the fork's first look, its deadline long past by the
    parent's clock."""
    events = [*session.recorded, *session.emitted]
    for index, event in enumerate(events):
        if isinstance(event, WorkerHandedOff) and event.task_id == sub_id:
            return event.t + fork_gaps(events, index + 1)
    return time.time()


def here(session: Session, todo: list[tuple[str, Handoff]], crew: Crew) -> dict[str, Report | None]:
    """Specialists in threads of this process; None for one that missed its deadline."""

    def run(sub: Session, sub_id: str, handoff: Handoff) -> Report:
        try:
            return crew.run(sub, sub_id, handoff)
        finally:
            if crew.release is not None:
                crew.release()

    pool = ThreadPoolExecutor(max_workers=crew.cap, thread_name_prefix="specialist")
    # Each in a copy of this thread's context: the children a specialist starts here are the
    # step's, ended with its lost lease (runtime/children.py).
    futures = {
        sub_id: pool.submit(
            contextvars.copy_context().run,
            run,
            session.sub(worker_stream(session.run_id, sub_id, h.worker_id)),
            sub_id,
            h,
        )
        for sub_id, h in todo
    }
    # The clock starts now, not at the hand-off: a run resumed after a crash gives its
    # specialists their whole time again. A replay has no clock: the record says who timed out.
    began = time.time()
    out: dict[str, Report | None] = {}
    for sub_id, handoff in todo:
        left = None if session.replay else began + handoff.deadline_seconds - time.time()
        try:
            out[sub_id] = futures[sub_id].result(timeout=None if left is None else max(0.0, left))
        except FutureTimeout:
            out[sub_id] = None
    pool.shutdown(wait=False, cancel_futures=True)  # a hung specialist is left behind
    return out


def away(session: Session, todo: list[tuple[str, Handoff]], crew: Crew) -> dict[str, Report | None]:
    """Specialists on other workers: each was sent off when its brief was handed over (see
    `hand_off`); a stream that holds a whole run is read back here. While any is still at
    work and within its deadline, this step ends (Waiting) and a later one looks again."""
    out: dict[str, Report | None] = {}
    waiting = []
    looks = []  # for each sub-task waited on, how soon it is worth looking at again
    leases = Leases(session.journal, session.run_id)
    for sub_id, handoff in todo:
        stream = worker_stream(session.run_id, sub_id, handoff.worker_id)
        records = session.source.read(Leases.stream(stream))
        lease = [r.event for r in records]
        # The clock before the stream: a report that comes between the two is read back, and
        # one not there yet when the stream is read came after `now`, so after the deadline
        # when `now` is past it. The other way round, a report that came in time but after
        # the stream was read would be judged late by a clock read after it.
        now = time.time()
        if finished(last_of(session, stream)):
            out[sub_id] = crew.run(session.sub(stream), sub_id, handoff)
            continue
        handed = handed_at(session, sub_id)  # a scan of the record: only for one not finished
        # A look that resumes the run (not live) leaves the clock alone: which sub-tasks timed
        # out is in the record (fan_out), and today's clock would time out one that was given
        # up on its restarts before its deadline, and diverge from the record.
        if session.live and now > handed + handoff.deadline_seconds:
            # Given up: its lease is closed first, so that a start of it still on the queue
            # (or at work) cannot run or write for a sub-task the run has settled.
            late = f"timed out: no report {handoff.deadline_seconds:g} s after its brief"
            if not leases.close(stream, session.run_id, late):
                # Its lease moved under three closes in a row: the timeout is recorded all
                # the same, and a start of it still queued is not refused. Say so.
                log.warning("%s: the lease of timed-out %s could not be closed", stream, sub_id)
            out[sub_id] = None
        elif lease and isinstance(lease[-1], LeaseClosed):
            # Given up on its restarts by an earlier look (this one resumes the run, or that
            # step died before it said so): its lease holds what that look read, and no more.
            why = restarts.tally(lease, crew.outages).why()
            out[sub_id] = failed(handoff, "tool_error", 0, 0, why)
        elif lease and isinstance(lease[-1], LeaseReleased):
            # It let go of its lease with its work unfinished: it failed. Start it again (after
            # a wait, while its model endpoint is down: restarts.py), up to the cap; then the
            # sub-task has failed, and recovery takes it from there.
            tally = restarts.tally(lease, crew.outages)
            if tally.given_up:
                # Its lease is closed at the version this look read: a later start is refused,
                # so every look that resumes the run reads these starts and decides the same.
                at = records[-1].version
                if session.live and not leases.close(stream, session.run_id, tally.why(), at):
                    # A start took the lease after it was read (a duplicate delivery, a restart
                    # sent before): not given up on what is no longer so. Look again.
                    looks.append(WAIT_SECONDS)
                    waiting.append(sub_id)
                else:
                    out[sub_id] = failed(handoff, "tool_error", 0, 0, tally.why())
            else:
                due = now >= tally.again_at  # when, not whether: nothing is journalled
                if session.live and crew.dispatch is not None and due:
                    crew.dispatch(session.run_id, sub_id, handoff.model_dump(mode="json"))
                    looks.append(WAIT_SECONDS)  # started again: is it taken?
                else:
                    looks.append(tally.again_at - now)  # its next start is not due before
                waiting.append(sub_id)
        else:
            looks.append((now - handed) / 10)  # at work: a tenth of its time out
            waiting.append(sub_id)
    if waiting:
        wait = min(LONGEST_LOOK, max(WAIT_SECONDS, min(looks)))
        raise Waiting(wait, f"waiting for {', '.join(waiting)}")
    return out


def check(session: Session, sub_id: str, report: Report) -> Report:
    """Drop the findings the worker's own tool results do not back, and journal each."""
    return checked(session, sub_id, report)[0]


def checked(
    session: Session, sub_id: str, report: Report
) -> tuple[Report, list[verify.Unsupported]]:
    """`check`, and the findings it dropped with why."""
    stream = worker_stream(session.run_id, sub_id, report.worker_id)
    # The record of the worker's stream: the journal itself when live, the original in a replay.
    own = verify.tool_results([r.event for r in session.source.read(stream)], report.worker_id)
    unsupported = verify.verify(report, own)
    for problem in unsupported:
        session.emit(problem.event(session.run_id).model_copy(update={"task_id": sub_id}))
    bad = {(u.call_id, u.claim) for u in unsupported}
    kept = [f for f in report.findings if (f.source_call_id, f.claim) not in bad]
    return report.model_copy(update={"findings": kept}), unsupported
