"""Real worker processes on a real Redis broker: SIGKILL them mid-run, deliver steps twice,
poison a run — every run still ends completed or dead-lettered, and nothing runs twice."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime import views
from services import runs
from tasks.runs import advance
from tests.runtime.helpers import facts
from tests.tasks.conftest import settled, wait_until

pytestmark = pytest.mark.slow
SCENARIOS = ["first-flight", "premature-done", "flaky-tool"]


def run_events(run_id):
    return [r.event for r in DjangoJournal().read(f"run-{run_id}")]


def progress(run_ids) -> int:
    return StoredEvent.objects.filter(run_id__in=run_ids, stream__startswith="run-").count()


def pool(proc) -> set[str]:
    """The pids of a worker and its pool's processes (Linux: /proc lists a process's children)."""
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    found = children.read_text().split() if children.exists() else []
    return {str(proc.pid), *found}


def driving(proc, run_ids) -> bool:
    """Whether one of this worker's processes holds a run's step lease right now: a holder is
    "host:pid:delivery", and a lease is held from its grant until its release."""
    pids = pool(proc)
    for run_id in run_ids:
        leases = [
            r.event
            for r in DjangoJournal().read(f"lease-{run_id}")
            if r.event.kind in ("LeaseGranted", "LeaseReleased")
        ]
        last = leases[-1] if leases else None
        if last is not None and last.kind == "LeaseGranted" and last.holder.split(":")[1] in pids:
            return True
    return False


def comparable(run_id, events):
    """The run's facts with its id and workspace name taken out, to compare two runs."""
    rows = facts(events)
    text = repr(rows).replace(run_id, "RUN")
    return text


def test_runs_survive_workers_killed_mid_run(redis_workers, fly_team):
    run_ids = [runs.start_run("repo-fix", s) for s in SCENARIOS]
    # A run whose next step was sent to the killed worker's own queue (its flight was parked
    # there) is revived once nobody took it for STALL_SECONDS: 5 s here, not the default 60.
    # A second worker is up from the start, and each kill's replacement boots while the
    # survivor goes on: recovery waits for leases to run out, not for a worker to start.
    worker, survivor = redis_workers.start(MINUTES_STALL_SECONDS="5"), redis_workers.start()
    for threshold in (40, 110):  # kill at two different points of progress, mid-step
        # Killed between two steps the worker would hold nothing: wait until it drives one.
        # (The step may still end before the kill lands; the check after counts real cuts.)
        wait_until(
            lambda t=threshold, w=worker: progress(run_ids) >= t and driving(w, run_ids),
            60,
            f"{threshold} events and a step on the worker to kill",
            redis_workers,
        )
        redis_workers.kill(worker)
        worker, survivor = survivor, redis_workers.start()
    wait_until(lambda: settled(run_ids), 120, "every run to settle", redis_workers)
    projection.catch_up()
    executed = Counter(redis_workers.exec_log.read_text().splitlines())
    twice = {line: n for line, n in executed.items() if n > 1}
    # Only a call in flight at a kill may run again: at most one per kill and run.
    assert sum(n - 1 for n in twice.values()) <= 2 * len(run_ids), twice
    cut = 0  # steps whose worker died under them: their lease was never given back
    for run_id, scenario in zip(run_ids, SCENARIOS, strict=True):
        assert runs.status_of(run_id) in ("done", "dead-lettered"), run_id
        records = DjangoJournal().read(f"run-{run_id}")
        assert [r.version for r in records] == list(range(1, len(records) + 1))
        bill = views.bill(records)
        debited = sum(e.amount for e in run_events(run_id) if e.kind == "BudgetDebited")
        assert bill["balanced"] and bill["spent"] == debited
        leases = [
            r.event.kind
            for r in DjangoJournal().read(f"lease-{run_id}")
            if r.event.kind != "LeaseRenewed"  # the heartbeat's, between grant and release
        ]
        cut += sum(
            1
            for a, b in zip(leases, [*leases[1:], None], strict=True)
            if a == "LeaseGranted" and b != "LeaseReleased"
        )
        rerun = any(line.startswith(run_id) for line in twice)
        if runs.status_of(run_id) == "done" and not rerun:
            # Nothing ran twice: the journal is the one an uninterrupted flight writes. (A call
            # cut in flight runs again and may see a changed world: the flaky runner's
            # marker, for one. Its journal is then valid, but not the same.)
            reference = fly_team(scenario, park=True, started_by="operator")
            ours = [r.event for r in records]
            assert comparable(run_id, ours) == comparable(reference.run_id, reference.events)
    assert cut >= 1  # the kills really landed mid-step


def test_the_same_step_delivered_twice_at_once_has_one_driver(redis_workers, fly_team):
    run_id = runs.start_run("repo-fix", "first-flight")
    advance.delay(run_id)  # duplicates of the first step, racing the original
    advance.delay(run_id)
    redis_workers.start(concurrency=3)
    wait_until(lambda: settled([run_id]), 60, "the run to settle", redis_workers)
    assert runs.status_of(run_id) == "done"
    reference = fly_team("first-flight", park=True, started_by="operator")
    assert comparable(run_id, run_events(run_id)) == comparable(reference.run_id, reference.events)
    leases = [
        r.event for r in DjangoJournal().read(f"lease-{run_id}") if r.event.kind == "LeaseGranted"
    ]
    steps = sum(1 for e in run_events(run_id) if e.kind == "ModelCalled")
    assert len(leases) == steps  # one lease per step: the duplicates never drove


def test_a_poison_step_is_dead_lettered_after_its_attempts(redis_workers, settings):
    run_id = runs.start_run("repo-fix", "first-flight")
    # Each start dies at once, and the next waits for the dead one's lease to run out: a 1 s
    # lease, where nothing lives long enough to need renewing.
    redis_workers.start(MINUTES_FAULT=f"poison:{run_id}", MINUTES_STEP_LEASE_SECONDS="1")
    wait_until(
        lambda: runs.status_of(run_id) == "dead-lettered", 90, "the dead letter", redis_workers
    )
    projection.catch_up()
    control = [r.event for r in DjangoJournal().read(f"control-{run_id}")]
    [letter] = [e for e in control if e.kind == "DeadLettered"]
    assert letter.attempts == settings.MAX_STEP_ATTEMPTS
    assert "started 3 times and never finished" in letter.reason
    assert len(run_events(run_id)) == 1  # it never got past TeamStarted, and stopped looping


def test_the_support_desk_on_workers_refunds_once_and_parks_its_conflict(redis_workers):
    """The refund outlives the step that timed out waiting for it (its thread goes on in the
    worker), and the retry in the next step, maybe on another worker, does not refund again."""
    from desk.models import Order, Refund

    refund_run = runs.start_run("support-desk", "double-refund", desk={"order_id": "W-1"})
    conflict_run = runs.start_run("support-desk", "lost-update", desk={"order_id": "W-2"})
    redis_workers.start()
    redis_workers.start(concurrency=1)
    wait_until(lambda: settled([refund_run, conflict_run]), 90, "both runs", redis_workers)
    assert runs.status_of(refund_run) == "done"
    assert Refund.objects.filter(order_id="W-1").count() == 1
    assert Order.objects.get(order_id="W-1").status == "refunded"
    assert runs.status_of(conflict_run) == "waiting"  # escalated, its conflict open for a person
    assert Order.objects.get(order_id="W-2").status == "shipped"
    assert DjangoJournal().read_prefix("conflict-")[0].event.run_id == conflict_run


def test_support_triage_fans_out_to_specialists_on_two_worker_processes(redis_workers):
    """Each specialist is a Celery task of its own, on its own stream and lease; the run's
    step waits for them between steps, and the answer says DEGRADED when policy fails."""
    from journal_store.models import BillLine
    from runtime.events import AgentFinished, AnswerComposed, LeaseGranted, RunStarted

    run_id = runs.start_run("support-triage", "broken-policy")
    redis_workers.start(concurrency=2)
    wait_until(lambda: settled([run_id]), 90, "the triage run", redis_workers)
    assert runs.status_of(run_id) == "done"
    journal = DjangoJournal()
    [answer] = [e for e in run_events(run_id) if isinstance(e, AnswerComposed)]
    assert answer.degraded and "cached policy" in answer.degraded
    assert answer.text.startswith("DEGRADED:") and "KB-999" not in answer.text

    specialists = journal.read_prefix(f"worker-{run_id}-")
    streams = {r.stream for r in specialists}
    assert len(streams) == 3
    spans = []
    for stream in streams:
        events = [r.event for r in specialists if r.stream == stream]
        start = next(e.t for e in events if isinstance(e, RunStarted))
        end = next(e.t for e in events if isinstance(e, AgentFinished))
        spans.append((start, end))
    spans.sort()
    assert any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))
    holders = {
        r.event.holder.split(":")[1]  # host:pid:task
        for r in journal.read_prefix(f"lease-worker-{run_id}-")
        if isinstance(r.event, LeaseGranted)
    }
    assert len(holders) >= 2  # two worker processes ran specialists at once

    # The policy specialist's process tripped its breaker: logged for the run, by run id.
    from runtime.events import BreakerTripped

    trips = [r.event for r in journal.read(f"breakers-{run_id}")]
    assert any(isinstance(e, BreakerTripped) and e.breaker == "tools:policy" for e in trips)
    assert all(e.run_id == run_id for e in trips)

    projection.catch_up()
    billed = set(BillLine.objects.filter(run_id=run_id).values_list("agent", flat=True))
    assert {"orders-worker", "kb-worker", "policy-worker"} <= billed


def test_a_specialist_that_fails_is_started_again_by_its_supervisor(redis_workers):
    """S2's first start raises (its lease is released with the work undone); the run's step
    sees that and starts it again; the second start finishes the work, once."""
    from runtime.events import AnswerComposed, LeaseGranted, ToolReturned

    run_id = runs.start_run("support-triage", "broken-policy")
    redis_workers.start(concurrency=2, MINUTES_FAULT="fail:S2#1")
    wait_until(lambda: settled([run_id]), 90, "the triage run", redis_workers)
    assert runs.status_of(run_id) == "done"
    journal = DjangoJournal()
    [lease] = {r.stream for r in journal.read_prefix(f"lease-worker-{run_id}-S2-")}
    grants = [r.event for r in journal.read(lease) if isinstance(r.event, LeaseGranted)]
    assert len(grants) >= 2  # failed once, started again
    kb_stream = lease.removeprefix("lease-")
    searches = [r.event for r in journal.read(kb_stream) if isinstance(r.event, ToolReturned)]
    assert len(searches) == 1  # the work itself was done once
    [answer] = [e for e in run_events(run_id) if isinstance(e, AnswerComposed)]
    assert "KB-104" in answer.text


def test_a_runs_cap_on_parallel_specialists_holds_across_worker_processes(redis_workers):
    """parallel=1: three specialists, four worker processes, and never two at work at once."""
    from runtime.events import AgentFinished, RunStarted

    run_id = runs.start_run("support-triage", "broken-policy", parallel=1)
    redis_workers.start(concurrency=4)
    wait_until(lambda: settled([run_id]), 90, "the triage run", redis_workers)
    assert runs.status_of(run_id) == "done", run_events(run_id)[-3:]
    specialists = DjangoJournal().read_prefix(f"worker-{run_id}-")
    spans = sorted(
        (
            next(
                r.event.t for r in specialists if r.stream == s and isinstance(r.event, RunStarted)
            ),
            next(
                r.event.t
                for r in specialists
                if r.stream == s and isinstance(r.event, AgentFinished)
            ),
        )
        for s in {r.stream for r in specialists}
    )
    assert len(spans) == 3
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans))
    # The two that found the slot taken waited for it: none was given up on at its deadline
    # and handed off again (Celery's default retry limit once dropped them).
    assert not [e for e in run_events(run_id) if e.kind == "WorkerTimedOut"]


def test_on_two_worker_nodes_each_run_stays_warm_on_one_and_writes_what_cold_steps_write(
    redis_workers, fly_team
):
    run_ids = [runs.start_run("repo-fix", s) for s in SCENARIOS]
    for _ in range(2):  # two nodes of one process each: a run's next step goes to its process
        redis_workers.start(concurrency=1, MINUTES_WARM_RUNS="4", MINUTES_STEP_TURNS="1")
    wait_until(lambda: settled(run_ids), 120, "every run to settle", redis_workers)
    for run_id, scenario in zip(run_ids, SCENARIOS, strict=True):
        assert runs.status_of(run_id) == "done", run_id
        reference = fly_team(scenario, park=True, started_by="operator")
        ours = run_events(run_id)
        assert comparable(run_id, ours) == comparable(reference.run_id, reference.events)
        granted = [
            r.event.holder
            for r in DjangoJournal().read(f"lease-{run_id}")
            if r.event.kind == "LeaseGranted"
        ]
        assert len(granted) == sum(1 for e in ours if e.kind == "ModelCalled")  # a turn a step
        processes = {holder.rsplit(":", 1)[0] for holder in granted}  # host:pid:delivery
        assert len(processes) == 1, processes  # every step on the process its flight waits in
