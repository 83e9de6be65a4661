"""The specialist step: one sub-task of a fan-out run, run to its end on a worker.

The run's step hands a brief over (WorkerHandedOff in the run's stream) and sends the
specialist off (`dispatch`; on a worker, the task `tasks.fanout.specialist` calls
`run_specialist`). The step then ends, and later steps look at the specialists' streams until
each holds a whole run or its deadline passes. A specialist:

    - takes a lease on its stream (`lease-worker-...`) and writes through it, fenced: a
      redelivered or duplicated task that lost the lease cannot write; a heartbeat renews it
      (and the slot's) while the specialist works. Once the run gave the sub-task up, the
      lease is closed (engine.away): a start that comes after does nothing;
    - resumes from its stream: a worker killed mid-specialist loses at most the turn in hand;
    - takes one of its run's `parallel` slots first (leases `slots-<run>-<n>`), or waits for
      one without holding a worker: the per-run cap; the per-pool cap is the workers' own
      concurrency;
    - talks to the MCP tool servers through one surface per worker process, started on first
      use and shared by the specialists that process runs.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime import flight, streams
from runtime.coordination.gates import Lease, Leases
from runtime.events import (
    Event,
    LeaseReleased,
    ToolsListed,
    WorkerHandedOff,
    WorkerReported,
    WorkerTimedOut,
)
from runtime.fanout import engine, restarts
from runtime.fanout.contracts import Handoff
from runtime.fenced import Fenced
from runtime.journal import Recorded, StaleEpoch, WrongExpectedVersion, append_next
from runtime.model import EndpointDown
from runtime.session import Session
from services import queue, redacted
from services.control import faults, heartbeat, lasts
from teams.triage.belt import Belt
from teams.triage.settings import TriageSettings
from teams.triage.specialist import work
from teams.triage.spend import Metered, spend_breaker
from teams.triage.surface import default_surface

log = logging.getLogger(__name__)
SLOT_WAIT_SECONDS = 0.5  # before a specialist whose run has no free slot asks again
OUTCOME_CHARS = 500  # of a failure's message, in its lease's release

_surface: Any = None
_surface_lock = threading.Lock()


def shared_surface() -> Any:
    """This worker process's MCP surface (a dead server inside it is marked degraded, and its
    calls come back as observations; the surface itself stays up)."""
    global _surface
    with _surface_lock:
        if _surface is None:
            # One book of credits and labels for the process's runs, where the workspaces are.
            settings.WORKSPACES.mkdir(parents=True, exist_ok=True)
            # Shared by the process's runs: no one step's lost lease ends its servers.
            _surface = default_surface(
                book=settings.WORKSPACES / "orders-book.sqlite3", shared=True
            )
        return _surface


class Borrowed:
    """The shared surface, lent to one specialist: closing it leaves it running."""

    def __init__(self, surface: Any) -> None:
        self.surface = surface

    def __getattr__(self, name: str) -> Any:
        return getattr(self.surface, name)

    def close(self) -> None:
        pass


def dispatch(run_id: str, sub_id: str, handoff: dict[str, Any]) -> None:
    """Send a specialist off once the step that handed its brief over has committed. The task
    carries ids only: its brief is the WorkerHandedOff that step journalled."""
    queue.specialist(run_id, sub_id)


def brief(journal: DjangoJournal, run_id: str, sub_id: str) -> Handoff | None:
    """The sub-task's latest brief, as its run's stream holds it."""
    for record in reversed(journal.of_kind(run_id, streams.journal(run_id), "WorkerHandedOff")):
        if isinstance(record.event, WorkerHandedOff) and record.event.task_id == sub_id:
            return Handoff.model_validate(record.event.handoff)
    return None


@dataclass(frozen=True)
class Down:
    """A specialist of a running run waiting out its model endpoint (restarts.py)."""

    sub_id: str
    worker_id: str
    since: float  # when the outage's first start gave its lease back
    starts: int  # its starts that met the endpoint down, waited out
    last: str  # what the latest said ("EndpointDown: ...")
    until: float  # when waiting it out ends: its starts count from then


def endpoint_down(run_id: str) -> list[Down]:
    """The run's specialists whose model endpoint is down, being waited out: what the run's
    header says of them, where it said only "running" for up to MINUTES_OUTAGE_SECONDS."""
    return endpoints_down([run_id]).get(run_id, [])


def endpoints_down(run_ids: list[str]) -> dict[str, list[Down]]:
    """`endpoint_down` for each of these runs (the runs list asks it for a page of running
    runs), by the same few queries however many runs: a seek by kind for the briefs and the
    reports in the runs' own streams (none for teams that fan nothing out), the last record
    of each unreported specialist's lease, and the whole leases of those whose last start met
    the endpoint down (two events a start), all in one read."""
    if not run_ids:
        return {}
    journal = DjangoJournal()
    runs = ", ".join(["%s"] * len(run_ids))
    kinds = (WorkerHandedOff.kind, WorkerReported.kind, WorkerTimedOut.kind)
    # By the (run, kind) index, a seek per run and kind, and put in order here: asked in
    # position order (and by stream), SQLite read them off the (run, position) index, every
    # event of the run, to keep the few of these kinds: 8 ms of the header's 17 at 20,000
    # events, where a specialist was never sent off.
    own = {streams.journal(r) for r in run_ids}
    records = sorted(
        journal.select(f"WHERE run_id IN ({runs}) AND kind IN (%s, %s, %s)", [*run_ids, *kinds]),
        key=lambda r: r.position,
    )
    at_work: dict[tuple[str, str], Recorded] = {}  # (run, sub-task): its latest brief
    for r in (r for r in records if r.stream in own):  # in order: a report after the latest
        # brief means it is not at work
        key = (r.event.run_id, r.event.task_id or "")
        if isinstance(r.event, WorkerHandedOff):
            at_work[key] = r
        else:
            at_work.pop(key, None)
    leases = {}
    for (run_id, sub_id), record in at_work.items():
        assert isinstance(record.event, WorkerHandedOff)
        worker_id = str(record.event.handoff.get("worker_id", ""))
        stream = Leases.stream(streams.worker(run_id, sub_id, worker_id))
        leases[stream] = (run_id, sub_id, worker_id)
    window = restarts.Outages(window=settings.OUTAGE_SECONDS)
    met_down = sorted(
        stream
        for stream, last in lasts(list(leases)).items()
        if isinstance(last.event, LeaseReleased) and last.event.outcome.startswith(restarts.DOWN)
    )
    whole: dict[str, list[Event]] = {stream: [] for stream in met_down}
    if met_down:
        marks = ", ".join(["%s"] * len(met_down))
        for r in journal.select(f"WHERE stream IN ({marks}) ORDER BY stream, version", met_down):
            whole[r.stream].append(r.event)
    found: dict[str, list[Down]] = {}
    for stream, lease in whole.items():
        released = lease[-1]
        tally = restarts.tally(lease, window)
        if tally.outage is None or released.t - tally.outage >= window.window:
            continue  # not waited out (past the window, or none): its starts count as failures
        run_id, sub_id, worker_id = leases[stream]
        until = tally.outage + window.window
        down = Down(sub_id, worker_id, tally.outage, tally.waited, tally.last, until)
        found.setdefault(run_id, []).append(down)
    return found


def spent_so_far(run_id: str) -> int:
    """What the run has spent so far, every stream of it (its bill's debits): the summary's
    figure once the projector has caught up, rather than a sum over every debit of the run."""
    return int(projection.summary_now(run_id, "spent") or 0)


def run_specialist(run_id: str, sub_id: str, holder: str) -> str:
    """Run one specialist to its end on its own stream; what became of it."""
    journal = DjangoJournal()
    handoff = brief(journal, run_id, sub_id)
    if handoff is None:
        return "missing"  # no such run or sub-task (or not committed yet): nothing to do
    stream = engine.worker_stream(run_id, sub_id, handoff.worker_id)
    if engine.finished([r.event for r in journal.read(stream)]):
        return "finished"  # a duplicate delivery: the work is done and recorded
    run = streams.journal(run_id)
    first = journal.first(run)  # the run's settings; what else is needed is sought by kind
    config = flight.recorded_config([first.event] if first else [], run_id)
    leases = Leases(journal)
    if leases.closed(stream):
        # The run gave the sub-task up (its deadline passed, or its restarts ran out) and
        # closed its lease: this start was queued before that (a duplicate delivery, a restart
        # sent just before). It writes nothing, not even to the run's slots.
        return "given up"
    slot = take_slot(leases, run_id, TriageSettings.of(config).parallel, holder)
    if slot is None:
        return "full"  # the run has as many specialists at work as it may: later
    lease = leases.acquire(stream, holder, settings.STEP_LEASE_SECONDS)
    if lease is None:
        leases.release(slot)
        return "given up" if leases.closed(stream) else "busy"  # or another worker holds it
    writer = Fenced(journal, leases.stream(stream), lease.epoch)
    beat = heartbeat(leases, lease, slot, writer=writer)  # both held however long it works
    outcome = ""  # what its lease's release says became of the work
    retry_after: float | None = None  # what its model endpoint asked, when it failed it
    try:
        seams = faults()
        seams.specialist_started(sub_id, starts(journal, stream))
        clients = flight.clients_for(config, flight.team_named(config.team), models=settings.MODELS)
        session = Session(
            writer,
            run_id,
            stream=stream,
            faults=seams,
        )
        belt = Belt(lambda: Borrowed(shared_surface()))
        listed = journal.of_kind(run_id, run, "ToolsListed")[0].event
        assert isinstance(listed, ToolsListed)
        belt.specs = listed.tools
        # The run's spending so far seeds this process's breaker: the cap holds across
        # workers; the rate is judged on what this specialist spends (its refusal is journalled
        # as the model call that failed, in its own stream).
        spent = spent_so_far(run_id)
        client = Metered(clients[handoff.worker_id], spend_breaker(config, run_id, belt, spent))
        report = work(session, sub_id, handoff, client, belt)
        if belt.events:
            # Breakers that tripped in this process: the run's stream is its step's to write,
            # so they go to the run's breaker log, which its pages and audit read by run id.
            events = [
                e.model_copy(update={"run_id": run_id, "task_id": sub_id}) for e in belt.events
            ]
            append_next(journal, streams.breakers(run_id), events)
        return report.status
    except (StaleEpoch, WrongExpectedVersion):
        return "lost"  # the lease moved on: somebody else has this specialist now
    except EndpointDown as exc:
        # Its model endpoint did not answer: the start failed, and the release says why. The
        # run's step reads it there: such starts are waited out, started again a while apart
        # and not counted, for as long as the run's own step would wait (OUTAGE_SECONDS); a
        # sub-task given up after that says since when the endpoint has not answered
        # (runtime/fanout/restarts.py).
        log.warning("run %s: specialist %s: %s", run_id, sub_id, redacted.said(exc))
        outcome = f"{restarts.DOWN}: {redacted.recorded(str(exc))}"[:OUTCOME_CHARS]
        # Its Retry-After, journalled: the next start comes no sooner (restarts.tally). Only
        # a number the release can hold: nothing a server says may keep the lease from going.
        said = exc.retry_after
        retry_after = said if said is not None and 0 <= said < math.inf else None
        return "endpoint down"
    finally:
        lease, slot = beat.stop()
        leases.release(lease, outcome, retry_after=retry_after)
        leases.release(slot)


def take_slot(leases: Leases, run_id: str, parallel: int, holder: str) -> Lease | None:
    """One of the run's `parallel` specialist slots (each a lease: taking one is a
    compare-and-swap, so two workers cannot both take the last), or None when all are held."""
    for n in range(parallel):
        slot = leases.acquire(streams.slot(run_id, n), holder, settings.STEP_LEASE_SECONDS)
        if slot is not None:
            return slot
    return None


def starts(journal: DjangoJournal, stream: str) -> int:
    """How many times a specialist has been started (its lease granted)."""
    return engine.starts([r.event for r in journal.read(Leases.stream(stream))])
