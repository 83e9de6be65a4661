"""Driving a run one bounded step at a time, and finding the runs nobody drives.

`drive_step(run_id)` drives one step of a run (up to STEP_TURNS agent turns, or STEP_SECONDS
of them, with the coordination around them) against the database journal, then enqueues the
next. The first step a process drives of a run rebuilds its state from the run's journal
(recorded model answers and tool results are replayed, never redone); at the step's end the
flight stays parked in this process (WARM, runtime/warm.py) and the next step is sent to this
worker, where it goes on without replaying anything. So a killed worker loses at most the turn
it was in, many runs share few workers fairly, and stopping a run is simply not enqueueing its
next step.

Who drives is decided by a lease whose epoch fences every append: a second delivery of the
same step finds the lease taken and stops without writing; a worker whose lease was taken over
cannot write either. A step's message carries the lease stream's version as it was sent, so a
message delivered after another step has taken the run (Redis gives a dead worker's message
out again after its visibility timeout, between two steps of the run it revived) does nothing
either, where it drove a step and started a second chain of next-step messages. A heartbeat
renews the lease while the step runs, so the lease is short (STEP_LEASE_SECONDS) however long
the step: a killed worker's lease runs out within it, and `revive_stalled` queues the run
again at the reconciler's next beat. A step that keeps dying (killed, or raising) is
dead-lettered after MAX_STEP_ATTEMPTS, counted in the lease's own events because Redis keeps
no redelivery count. A model endpoint that stays down is such a
step (runtime/model.py's EndpointDown): the run waits in the dead-letter queue, not ended, and a
person's retry asks the model again where it was.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections

from desk.services import database_desk, release
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoppedView, StoredEvent
from journal_store.snapshots import DatabaseSnapshots
from runtime import flight, status, streams
from runtime.backoff import doubling
from runtime.coordination.leases import Lease, taken_since
from runtime.events import DeadLettered, EventFormatError, RunInterrupted, TeamFinished
from runtime.fanout.restarts import Outages
from runtime.fenced import Fenced
from runtime.journal import JournalError, StaleEpoch, WrongExpectedVersion
from runtime.model import EndpointDown
from runtime.sandbox import Sandbox
from runtime.session import Session
from runtime.team import FlightConfig, Services
from runtime.warm import WarmFlight, WarmFlights
from services import ended, queue, redacted, specialists, traces
from services.control import Control, Failing, faults, heartbeat, holder, stalled
from teams.desk.services import DeskServices

log = logging.getLogger(__name__)
# What Celery retries a step for: the database was briefly unavailable (locked, restarting).
# Anything else a step raises is recorded and retried by drive_step itself (see backoff).
TRANSIENT = (OperationalError, InterfaceError)

MAX_BACKOFF = 60.0  # seconds: the longest wait before a failed step is tried again
WAIT_SECONDS = 0.5  # between looks at specialists still at work (well under the visibility timeout)


def sandbox() -> Sandbox:
    """How agent code runs on this host, as the operator set it."""
    return Sandbox(required=settings.SANDBOX != "off", bwrap=settings.SANDBOX_BWRAP)


def provided() -> tuple[object, ...]:
    """The teams' services this host provides: the desk's world in the database."""
    return (DeskServices(desk=database_desk()),)


# This process's runs parked between steps (runtime/warm.py): a step of one of them goes on
# where the last one stopped instead of replaying the run's history.
WARM = WarmFlights(settings.WARM_RUNS, settings.WARM_IDLE_SECONDS)


def drive_step(
    run_id: str, worker: str | None = None, node: str | None = None, sent: int | None = None
) -> str:
    """Drive one step of the run; what became of it ("stepped", a verdict, "busy", ...).

    A step is up to STEP_TURNS turns, or STEP_SECONDS of them, in one session. The first step
    a process drives of a run reads the run's history and replays it; at the step's end the
    flight is parked here (WARM), and the next step, if it finds the stream where the flight
    left it, goes on without reading or replaying anything. `node` is the Celery worker that
    drives the step: the next one is sent to it, where its flight waits. `sent`: the run's
    lease stream's version when the message asking for this step was sent; a step that took
    the run since goes on with it, and this one does nothing ("moved").
    """
    journal = DjangoJournal()
    control = Control(run_id, journal)
    stream = streams.journal(run_id)
    try:
        head = journal.last(stream)  # one row, however long the run
    except EventFormatError as exc:
        return unreadable(control, exc)
    if head is None:
        # A message naming no run, or this worker pointed at another database than the
        # server that started it: then every run waits, and only this line says why.
        log.warning(
            "a step of run %r was asked for, but it has no journal in %s: nothing done",
            run_id,
            database(),
        )
        return "missing"
    at, last = head.version, head.event
    if isinstance(last, TeamFinished):
        return last.status  # a late delivery: nothing to read, nothing to do
    WARM.resize(settings.WARM_RUNS, settings.WARM_IDLE_SECONDS)
    warm = WARM.take(run_id, at)
    config = None
    cold: Session | None = None  # the session of a flight this step started cold
    lease: Lease | None = None
    try:
        try:
            letter, unread = control.parked_on()
            if unread is not None:
                # A row of its control stream no event model reads: it may be a stop or a
                # letter's decision, so the run is parked for a person, not driven past it.
                return unreadable(control, unread)
            if letter is not None or isinstance(last, DeadLettered):
                # Parked on a letter (the driver's, or the harness's: the run's last event
                # until a person decides it): a step delivered again stops here, taking no
                # lease, where its starts were counted as a dying step's and dead-lettered it
                # a second time.
                return "dead-lettered"
            if isinstance(last, RunInterrupted) and control.stop_request() is not None:
                return "interrupted"
            if sent is not None and taken_since(control.leases.last(run_id), sent):
                # A message older than the step that took the run since: delivered again by
                # Redis after the visibility timeout (its worker died mid-step), or a second
                # one for the same step. Driving here, between two steps, started a second
                # chain of next steps beside the one that step sent.
                return "moved"
            if warm is None:
                # Only the settings: the cold flight's session reads the rest, around its
                # agent loop's latest snapshot when one fits (runtime/snapshots.py). Before
                # the lease: settings that name another place on disk touch nothing.
                first = journal.first(stream)
                try:
                    config = flight.recorded_config([first.event] if first else [], run_id)
                except flight.FlightError as exc:
                    return unstartable(control, exc)
            # What the step finds older than this was left by an earlier one (git's lock
            # files).
            began = time.monotonic()
            lease = control.acquire(worker or holder(), settings.STEP_LEASE_SECONDS, at, sent)
            if lease is None:
                return "busy"  # somebody else is driving this run: we do not write
            if warm is None:
                assert config is not None
                warm = cold_flight(run_id, config, control, lease)
                cold = warm.session
            else:
                fenced = warm.session.journal
                assert isinstance(fenced, Fenced)
                fenced.fence = lease.fence  # the flight's writes now carry this step's fence
        except EventFormatError as exc:
            # A row of its journal (the settings', the cold flight's read), its lease stream
            # (who drives it?) or its control stream no event model reads: parked naming it,
            # under the lease if this step took it.
            return unreadable(control, exc, lease)
        outcome, retry_in = step_under(lease, warm, control, at, began)
    finally:
        if warm is not None and warm.parked:
            WARM.keep(warm)  # the next step's `take` checks the stream is still where it left it
        elif warm is not None:
            warm.abandon()
            warm = None
    if cold is not None:
        # What a cold start cost, for whoever wonders why a step was slow: the events it read
        # and replayed, and those a loop snapshot let it skip.
        log.info(
            "run %s: cold step at version %s: %d events replayed, %d skipped (loop snapshot)",
            run_id,
            at,
            cold.record_length - cold.skipped,
            cold.skipped,
        )
    if outcome in ("stepped", "waiting", "failed-step"):
        traces.step_taken(run_id)  # its spans that ended, live, if asked: a message, no wait
    if outcome == "stepped":
        # To the node whose process holds the parked flight; a node that dies with the step
        # queued for it is covered by revive_stalled.
        queue.advance(run_id, node=node if warm is not None else None)
    elif outcome == "waiting":
        # Specialists are at work on other workers: look again in a moment, not at once (the
        # longer they have been out, the longer the moment: runtime/fanout/engine.py).
        queue.advance(run_id, countdown=retry_in or WAIT_SECONDS)
    elif outcome == "failed-step":
        queue.advance(run_id, countdown=retry_in)
    elif status.is_terminal(outcome):
        ended.run_ended(run_id, outcome)  # its trace pushed from a worker, later; no snapshot
    return outcome


def database() -> str:
    """The database this process reads, as a log line names it (never its password)."""
    found = connections["default"].settings_dict
    where = f" on {found['HOST']}" if found.get("HOST") else ""
    return f"the {connections['default'].vendor} database {str(found['NAME'])!r}{where}"


def sent_again(run_id: str, sent: int | None) -> int | None:
    """What a step retried after the database's trouble carries (tasks/runs.py advance): the
    run's lease stream's version now, or `sent` while the database still does not answer."""
    try:
        return Control(run_id).sent_at()
    except TRANSIENT:
        return sent


def cold_flight(run_id: str, config: FlightConfig, control: Control, lease: Lease) -> WarmFlight:
    """A flight that starts by replaying the run's history (from its agent loop's latest
    snapshot, where one fits), on a thread of its own."""
    session = Session(
        Fenced(DjangoJournal(), lease.stream, lease.epoch),
        run_id,
        stop=control.stop_request,
        resumed_by=control.resumed_by(),
        faults=faults(),
        snapshots=DatabaseSnapshots() if settings.SNAPSHOT_TURNS else None,
        snapshot_every=settings.SNAPSHOT_TURNS or 1,
    )
    services = Services(
        sandbox=sandbox(),
        release=release,
        dispatch=specialists.dispatch,
        provided=provided(),
        models=settings.MODELS,
        # A specialist whose model endpoint is down is waited out as the run's step is.
        outages=Outages(window=settings.OUTAGE_SECONDS, longest=longest_wait()),
    )
    return WarmFlight(
        session,
        lambda s: flight.drive(s, config, settings.WORKSPACES, services=services),
        on_exit=connections.close_all,  # the flight's thread has a database connection of its own
        threaded=WARM.size > 0,
    )


def unreadable(control: Control, exc: EventFormatError, lease: Lease | None = None) -> str:
    """A step that cannot read its run back (a row of its journal no event model reads) parks
    it in a dead letter naming the row, under `lease` if it took one (then given back), and
    writes nothing else. It raised out of the task: Celery retries only database trouble, so
    the work vanished, or the stall sweep sent it again at every beat to fail the same way."""
    row, cannot = "an event of its journal", "replay it"
    if exc.row is not None:
        position, stream, version, kind = exc.row
        row = f"its event at position {position} (version {version} of {stream}, kind {kind})"
        if stream == control.stream:
            cannot = "tell what was asked of it (a stop, a decision on a letter)"
        elif stream == control.lease_stream:
            cannot = "tell who drives it"
    why = (
        f"run {control.run_id} cannot be read back: {row} is unreadable, so no step can "
        f"{cannot}; mend the row and retry, or discard"
    )
    return parked(control, why, exc, lease)


def unstartable(control: Control, exc: flight.FlightError) -> str:
    """A step whose run's settings (its TeamStarted) do not make a flight parks it in a dead
    letter saying what is wrong with them, and writes nothing else. It answered "refused" and
    only logged it: the work vanished, nothing on the queue page, and the stall sweep sent it
    again at every beat to be refused the same way."""
    why = f"{exc}; no step can drive it so: mend its settings and retry, or discard"
    return parked(control, why, exc)


def parked(control: Control, why: str, exc: Exception, lease: Lease | None = None) -> str:
    """The run parked in a dead letter saying `why` (the letter's last error: `exc`), under
    `lease` if the step took one (then given back); nothing else is written. A letter already
    open stands: a delivery again, or the sweep."""
    run_id = control.run_id
    why = redacted.recorded(why)[:2000]
    try:
        letter, unread = control.parked_on()
        if letter is not None and unread is None:
            return "dead-lettered"
        error = redacted.recorded(f"{type(exc).__name__}: {exc}")[:2000]
        control.dead_letter(why, 0, error, lease.fence if lease else None)
    except (StaleEpoch, WrongExpectedVersion):
        return "lost"  # another driver took the run, or wrote its letter, meanwhile
    finally:
        if lease is not None:
            control.release(lease, "dead-lettered")
    log.warning("run %s: %s", run_id, redacted.line(why))
    projection.catch_up()  # the letter onto the queue's page
    return "dead-lettered"


def step_under(
    lease: Lease, warm: WarmFlight, control: Control, at: int, began: float | None = None
) -> tuple[str, float]:
    """One step of the flight while `lease` is held (and renewed; asked for at `began`,
    time.monotonic()): the outcome, and after how many seconds to try again when the step
    failed (or to look again when it waits on specialists)."""
    writer = warm.session.journal  # given up (it writes nothing more) if the lease is lost
    held = writer if isinstance(writer, Fenced) else None
    beat = heartbeat(control.leases, lease, writer=held)  # renews it; the epoch stays
    outcome = "lost"
    retry_in = 0.0
    try:
        failing = control.failing() if lease.attempt > settings.MAX_STEP_ATTEMPTS else None
        if failing is not None and failing.waits_out(time.time(), settings.OUTAGE_SECONDS):
            pass  # the model endpoint is down: the step is tried again, it failed nothing
        elif lease.attempt > settings.MAX_STEP_ATTEMPTS:
            starts, error = lease.attempt - 1, control.last_error(at)
            why = reason(at, starts, error, failing)
            letter = control.dead_letter(why, starts, error, lease.fence)
            outcome = "dead-lettered"
            log.warning("run %s: %s", control.run_id, redacted.line(letter.reason))
            return outcome, retry_in
        faults().step_started(control.run_id)  # a crash-test seam; does nothing unless armed
        result = warm.step(settings.STEP_TURNS, time.monotonic() + settings.STEP_SECONDS, began)
        outcome = result.status
        retry_in = result.again_in  # waiting on specialists: when they are worth a look
    except (StaleEpoch, WrongExpectedVersion):
        return "lost", retry_in  # another driver took over: we stop without writing
    except JournalError:
        raise
    except TRANSIENT:
        raise  # database trouble a retry can outlast: Celery retries the task with backoff
    except EndpointDown as exc:
        # The model endpoint is down: the journal stops at the ModelCalled, which the next step
        # replays and asks again. Counted as a failed step, so that an outage that lasts ends
        # in the dead-letter queue rather than in retries forever; a server that said when to
        # come back is taken at its word, within the step's longest backoff.
        log.warning("run %s: step at version %s: %s", control.run_id, at, redacted.said(exc))
        if beat.lost or not control.step_failed(at, exc, lease.fence):
            return "lost", retry_in  # taken over meanwhile: the new driver asks the model
        outcome = "failed-step"
        retry_in = min(longest_wait(), max(backoff(lease.attempt), exc.retry_after or 0.0))
    except Exception as exc:
        # A step that raises is recorded and tried again after a backoff; the lease's attempt
        # count, not Celery's, decides when it has failed often enough to dead-letter it.
        # Not log.exception: the message is the client's or the tool's, secrets and all.
        log.error("run %s: step at version %s failed\n%s", control.run_id, at, redacted.traced(exc))
        if beat.lost or not control.step_failed(at, exc, lease.fence):
            # Taken over meanwhile: the run is the new driver's. Or run out unrenewed, which
            # the failure may well come from (a git the lost lease ended: children.Ended).
            return "lost", retry_in
        outcome = "failed-step"
        retry_in = backoff(lease.attempt)
    finally:
        [lease] = beat.stop()  # as renewed: its version moved with each renewal
        if control.release(lease, outcome) and beat.lost and outcome == "lost":
            # Run out unrenewed, and nobody took it since (the release landed): no step is on
            # its way, and the reconciler would send one only STALL_SECONDS after this release.
            # (A step that parked before it wrote again sends its own: "stepped".)
            queue.advance(control.run_id)
        projection.catch_up()
    return outcome, retry_in


def reason(at: int, starts: int, error: str, failing: Failing | None) -> str:
    """Why the step is dead-lettered: what a person reads first (the run's header, the queue's
    card), so it says what failed as the step recorded it, not only that something did."""
    if failing is not None and failing.outage:
        # Nothing in the run failed and nothing is lost: the person's move is a retry.
        since = datetime.fromtimestamp(failing.since, UTC).strftime("%H:%M:%S UTC")
        return (
            f"the model endpoint has not answered since {since} ({failing.tries} failed steps); "
            f"the last time: {error or failing.last_error}; retry it once the model endpoint "
            "answers again"
        )
    if error:
        return f"the step at version {at} failed {starts} times; the last time: {error}"
    return (
        f"the step at version {at} was started {starts} times and never finished (its worker died)"
    )


def backoff(attempt: int) -> float:
    """Seconds before trying a failed step again: doubling from 2 s, at most a minute, with
    jitter so that steps that failed together do not retry together (runtime/backoff.py's
    rule, which a specialist whose model endpoint was down waits by too)."""
    return doubling(attempt, longest_wait())


def longest_wait() -> float:
    """The longest a failed step waits: a minute, and well within MINUTES_STALL_SECONDS, so
    that the reconciler never takes a run waiting out its backoff for one nobody drives (and
    notes a stall that was not one)."""
    return min(MAX_BACKOFF, settings.STALL_SECONDS * 0.75)


def revive_stalled() -> list[str]:
    """Re-enqueue running runs that nobody is driving (control.stalled: the lease expired, or
    no step took it within STALL_SECONDS); the ids sent. A second delivery is harmless: the
    lease lets one driver through, and the other stops without writing (or, arriving once that
    step is over, finds the run taken since it was sent)."""
    starts = {
        run_id: started.timestamp() if started else 0.0
        for run_id, started in RunSummary.objects.filter(status__in=status.ACTIVE).values_list(
            "run_id", "started_at"
        )
    }
    starts = with_set_aside(starts)
    revived = [run_id for run_id, since in stalled(starts).items() if alone(run_id, revive, since)]
    if revived:
        projection.catch_up()  # their RunStalled into the runs' findings
        log.warning("re-enqueued stalled runs: %s", ", ".join(revived))
    return revived


def revive(run_id: str, since: float) -> bool:
    """Send a step for the stalled run unless a letter parks it; whether one was sent."""
    control = Control(run_id)
    letter, unread = control.parked_on()
    if letter is not None and unread is None:
        return False
    # Its findings say it stalled, since when and why; unless a row of its control or lease
    # stream, which noting it reads, is one no event model reads (it raised out of the round:
    # no run after it was revived). The step sent parks it naming the row.
    with contextlib.suppress(EventFormatError):
        control.note_stall(since)
    queue.advance(run_id)
    return True


def alone(run_id: str, look: Callable[..., bool], *args: Any) -> bool:
    """`look(run_id, *args)`, one run's part of the sweep's round, or False (logged once, naming
    the run) when it raises what nobody foresaw: it raised out of the round, so no run after it
    was revived at any beat. The database's trouble still ends the round (services/beat.py)."""
    try:
        return look(run_id, *args)
    except TRANSIENT:
        raise
    except Exception as exc:
        # Not log.exception: the message may quote a row's words, or a secret.
        log.error(
            "stall sweep: run %r passed over this round, its look raised\n%s",
            run_id,
            redacted.traced(exc),
        )
        return False


def with_set_aside(starts: dict[str, float]) -> dict[str, float]:
    """`starts` (the runs whose summary says running) with the runs the summaries' projector
    set aside (journal_store/stopped.py) as their journal says. Such a run's summary is the one
    it had before the event its fold stopped at, so its status may be stale: a run finished
    since was queued again at every beat (a step that found its verdict and did nothing), and
    one resumed since was never revived. Each set aside is few, and read one at a time."""
    aside = StoppedView.objects.filter(projector=projection.Runs.name)
    stops = set(aside.values_list("run_id", flat=True))
    if not stops:
        return starts
    starts = {run_id: t for run_id, t in starts.items() if run_id not in stops}
    summaries = dict(
        RunSummary.objects.filter(run_id__in=stops).values_list("run_id", "started_at")
    )
    for run_id in sorted(stops):
        if not alone(run_id, going):
            continue
        started = summaries.get(run_id)
        if started is None:  # no summary (it stopped at the first event): the journal's start
            first = StoredEvent.objects.filter(run_id=run_id).order_by("position").first()
            starts[run_id] = first.t if first else 0.0
        else:
            starts[run_id] = started.timestamp()
    return starts


def going(run_id: str) -> bool:
    """Whether the journal says a step would drive the run, as drive_step decides, from the
    rows' kinds (a row a fold could not take may be one no event model reads): a verdict
    (TeamFinished) ends it; a stop it reached (RunInterrupted last, the stop standing) parks
    it. A dead letter is the sweep's own check. A run whose row the fold stopped at no event
    model reads is swept too: the step cannot read it back either, and parks it in a dead
    letter naming the row (unreadable), which the sweep then passes over."""
    rows = StoredEvent.objects.filter(run_id=run_id, stream=streams.journal(run_id))
    if rows.filter(kind=TeamFinished.kind).exists():
        return False
    last = rows.order_by("-version").values_list("kind", flat=True).first()
    if last is None:
        return False
    if last != RunInterrupted.kind:
        return True
    control = Control(run_id)
    letter, unread = control.parked_on()
    if letter is not None or unread is not None:
        # Parked (the sweep's own check passes over it), or to be parked naming a row of its
        # control stream no event model reads: the stop's look reads that stream whole, and
        # raised out of the sweep's round, so no run was revived at any beat.
        return True
    return control.stop_request() is None
