"""Runs on Celery workers, one bounded step per task.

`advance(run_id)` drives one step of a run (one agent turn, with the coordination around it)
against the database journal, then enqueues the next. Each step rebuilds its state from the
run's journal (recorded model answers and tool results are replayed, never redone) and goes
live for one turn. So a killed worker loses at most that turn, many runs share few workers
fairly, and stopping a run is simply not enqueueing its next step.

Who drives is decided by a lease whose epoch fences every append: a second delivery of the
same step finds the lease taken and stops without writing; a worker whose lease was taken over
cannot write either. A heartbeat renews the lease while the step runs, so the lease is short
(STEP_LEASE_SECONDS) however long the step: a killed worker's lease runs out within it, and
`reconcile` queues the run again at its next beat. A step that keeps dying (killed, or raising)
is dead-lettered after MAX_STEP_ATTEMPTS, counted in the lease's own events because Redis keeps
no redelivery count.
"""

from __future__ import annotations

import logging
import random
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.http import Http404

from desk.services import database_desk, release
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import flight, status
from runtime.events import (
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    RunInterrupted,
    TeamFinished,
    TeamStarted,
)
from runtime.journal import Fenced, JournalError, StaleEpoch, WrongExpectedVersion
from runtime.sandbox import Sandbox
from runtime.session import Session
from runtime.team import Services
from services import local_model, specialists
from services.control import Control, faults, heartbeat, holder, stalled
from teams.desk.services import DeskServices

log = logging.getLogger(__name__)
# What Celery retries a step for: the database was briefly unavailable (locked, restarting).
# Anything else a step raises is recorded and retried by drive_step itself (see backoff).
TRANSIENT = (OperationalError, InterfaceError)

WAIT_SECONDS = 0.5  # between looks at specialists still at work (well under the visibility timeout)


class RunError(Exception):
    """A run cannot be started or changed as asked; the message says why."""


class RunNotFound(RunError, Http404):
    """No run has this id (a page or an endpoint answers 404)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run {run_id}")


class RunFinished(RunError):
    """The run has reached its verdict: nobody may stop or resume it any more."""

    def __init__(self, run_id: str, verdict: str) -> None:
        super().__init__(f"run {run_id} has already finished ({verdict})")


class RunNotResumable(RunError):
    """The run's recorded settings cannot be driven here (they name another place on disk)."""


class LetterNotFound(RunError):
    def __init__(self, letter_id: str) -> None:
        super().__init__(f"no dead letter {letter_id}")


class LetterAlreadyDecided(RunError):
    def __init__(self, letter_id: str) -> None:
        super().__init__(f"dead letter {letter_id} has already been decided")


# --- starting and steering runs (used by commands, the API and the dashboard) -----------------


def sandbox() -> Sandbox:
    """How agent code runs on this host, as the operator set it."""
    return Sandbox(required=settings.SANDBOX != "off", bwrap=settings.SANDBOX_BWRAP)


def start_run(
    team: str, scenario: str | None, *, by: str = "operator", **settings_: Any
) -> str:
    """Record the run's TeamStarted and enqueue its first step; returns the run id. No
    scenario: the team's own first one."""
    run_id = flight.new_run_id()
    try:
        config = flight.plan(
            team,
            scenario,
            run_id,
            park=True,
            started_by=by,
            sandbox=sandbox().required,
            **settings_,
        )
    except flight.FlightError as exc:
        raise RunError(str(exc)) from None
    if "local" in (config.model, *config.models.values()):
        try:
            local_model.ensure_running()  # before the run exists: no run waits on no model
        except local_model.LocalModelError as exc:
            raise RunError(str(exc)) from None
    started = TeamStarted(
        run_id=run_id,
        team=config.team,
        scenario=config.scenario,
        task=config.task,
        config=config.model_dump(mode="json"),
    )
    DjangoJournal().append(f"run-{run_id}", [started], 0)
    projection.catch_up()
    transaction.on_commit(lambda: advance.delay(run_id))
    return run_id


def interrupt(run_id: str, by: str, reason: str = "") -> None:
    """Ask the run to stop at its next turn boundary."""
    state = status_of(run_id)
    if status.is_terminal(state):
        raise RunFinished(run_id, state)
    Control(run_id).request_stop(by, reason)


def resume(run_id: str, by: str, reason: str = "") -> None:
    """Lift a stop and drive the run on from its journal."""
    state = status_of(run_id)
    if status.is_terminal(state):
        raise RunFinished(run_id, state)
    try:  # its settings name places on disk: checked before any worker acts on them
        flight.recorded_config([r.event for r in DjangoJournal().read(f"run-{run_id}")], run_id)
    except flight.FlightError as exc:
        raise RunNotResumable(str(exc)) from None
    Control(run_id).request_resume(by, reason)
    transaction.on_commit(lambda: advance.delay(run_id))


def decide_letter(letter_id: str, decision: str, by: str, reason: str) -> None:
    """Retry or discard a dead letter, as a journalled human decision. Raises LetterNotFound
    or LetterAlreadyDecided (WrongExpectedVersion makes two deciders race fairly: exactly one
    decision is written)."""
    run_id = letter_id.split(":", 1)[0]
    journal = DjangoJournal()
    stream = f"control-{run_id}" if ":control:" in letter_id else f"run-{run_id}"
    records = journal.read(stream)
    letters = {r.event.letter_id: r for r in records if isinstance(r.event, DeadLettered)}
    if letter_id not in letters:
        raise LetterNotFound(letter_id)
    decided = (DeadLetterRetried, DeadLetterDiscarded)
    if any(isinstance(r.event, decided) and r.event.letter_id == letter_id for r in records):
        raise LetterAlreadyDecided(letter_id)
    cls = DeadLetterRetried if decision == "retry" else DeadLetterDiscarded
    event = cls(run_id=run_id, letter_id=letter_id, by=by, reason=reason)
    try:
        journal.append(stream, [event], len(records))
    except WrongExpectedVersion:
        raise LetterAlreadyDecided(letter_id) from None
    if decision == "discard" and stream.startswith("control-"):
        finish_discarded(run_id, by, reason)
    projection.catch_up()
    transaction.on_commit(lambda: advance.delay(run_id))


def finish_discarded(run_id: str, by: str, reason: str) -> None:
    """A discarded infrastructure letter ends the run: nobody will drive it again."""
    journal = DjangoJournal()
    version = journal.version(f"run-{run_id}")
    reason = f"discarded by {by}: {reason}"
    finished = TeamFinished(run_id=run_id, status="escalated", reason=reason)
    journal.append(f"run-{run_id}", [finished], version)


def status_of(run_id: str) -> str:
    events = [r.event for r in DjangoJournal().read(f"run-{run_id}")]
    if not events:
        raise RunNotFound(run_id)
    last = events[-1]
    if isinstance(last, TeamFinished):
        return last.status
    if isinstance(last, DeadLettered) or Control(run_id).open_letter() is not None:
        return status.DEAD_LETTERED
    if isinstance(last, RunInterrupted):
        return status.INTERRUPTED
    return status.RUNNING


# --- one step ---------------------------------------------------------------------------------


def drive_step(run_id: str, worker: str | None = None) -> str:
    """Drive one step of the run; what became of it ("stepped", a verdict, "busy", ...)."""
    journal = DjangoJournal()
    control = Control(run_id, journal)
    events = [r.event for r in journal.read(f"run-{run_id}")]
    if not events:
        return "missing"
    try:
        config = flight.recorded_config(events, run_id)
    except flight.FlightError as exc:
        log.error("run %s: not driven: %s", run_id, exc)
        return "refused"  # settings that name another place on disk: nothing is touched
    if isinstance(events[-1], TeamFinished):
        return events[-1].status
    if control.open_letter() is not None:
        return "dead-lettered"
    if isinstance(events[-1], RunInterrupted) and control.stop_request() is not None:
        return "interrupted"
    at = len(events)
    lease = control.acquire(worker or holder(), settings.STEP_LEASE_SECONDS, at)
    if lease is None:
        return "busy"  # somebody else is driving this run: we do not write
    beat = heartbeat(control.leases, lease)  # renews it while the step runs; the epoch stays
    outcome = "lost"
    retry_in = 0.0
    try:
        if lease.attempt > settings.MAX_STEP_ATTEMPTS:
            letter = control.dead_letter(
                f"the step at version {at} was started {lease.attempt - 1} times and never "
                "finished (its worker died or it kept failing)",
                lease.attempt - 1,
                control.last_error(at),
            )
            outcome = "dead-lettered"
            log.warning("run %s: %s", run_id, letter.reason)
            return outcome
        seams = faults()
        seams.step_started(run_id)  # a crash-test seam; does nothing unless armed
        session = Session(
            Fenced(journal, lease.stream, lease.epoch),
            run_id,
            recorded=events,
            steps=1,
            stop=control.stop_request,
            resumed_by=control.resumed_by(),
            faults=seams,
        )
        services = Services(
            sandbox=sandbox(),
            release=release,
            dispatch=specialists.dispatch,
            provided=(DeskServices(desk=database_desk()),),
        )
        result = flight.drive(session, config, settings.WORKSPACES, services=services)
        outcome = result.status
    except (StaleEpoch, WrongExpectedVersion):
        return "lost"  # another driver took over: it has the run, we stop without writing
    except JournalError:
        raise
    except TRANSIENT:
        raise  # database trouble a retry can outlast: Celery retries the task with backoff
    except Exception as exc:
        # A step that raises is recorded and tried again after a backoff; the lease's attempt
        # count, not Celery's, decides when it has failed often enough to dead-letter it.
        log.exception("run %s: step at version %s failed", run_id, at)
        control.step_failed(at, exc)
        outcome = "failed-step"
        retry_in = backoff(lease.attempt)
    finally:
        [lease] = beat.stop()  # as renewed: its version moved with each renewal
        control.release(lease, outcome)
        projection.catch_up()
    if outcome == "stepped":
        transaction.on_commit(lambda: advance.delay(run_id))
    elif outcome == "waiting":
        # Specialists are at work on other workers: look again in a moment, not at once.
        transaction.on_commit(lambda: advance.apply_async((run_id,), countdown=WAIT_SECONDS))
    elif outcome == "failed-step":
        transaction.on_commit(lambda: advance.apply_async((run_id,), countdown=retry_in))
    return outcome


def backoff(attempt: int) -> float:
    """Seconds before trying a failed step again: doubling from 2 s, at most a minute, with
    jitter so that steps that failed together do not retry together."""
    return min(60.0, 2.0**attempt) * random.uniform(0.5, 1.0)


# --- Celery tasks -----------------------------------------------------------------------------


@shared_task(
    name="tasks.runs.advance",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
)
def advance(self: Any, run_id: str) -> str:
    """One step of a run. Takes an id, never an object: it reads everything from the journal."""
    return drive_step(run_id, f"{holder()}:{self.request.id}")


@shared_task(name="tasks.runs.reconcile")
def reconcile() -> list[str]:
    """Re-enqueue running runs that nobody is driving (control.stalled: the lease expired, or
    no step took it within STALL_SECONDS). A second delivery is harmless: the lease lets one
    driver through and the other stops without writing."""
    starts = {
        run_id: started.timestamp() if started else 0.0
        for run_id, started in RunSummary.objects.filter(status__in=status.ACTIVE).values_list(
            "run_id", "started_at"
        )
    }
    revived = []
    for run_id in stalled(starts):
        if Control(run_id).open_letter() is not None:
            continue
        advance.delay(run_id)
        revived.append(run_id)
    if revived:
        log.warning("re-enqueued stalled runs: %s", ", ".join(revived))
    return revived
