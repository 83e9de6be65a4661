"""A step that takes longer than its lease keeps it: a heartbeat renews the lease while the step
runs, so nobody else drives the run meanwhile and the step's own appends are not fenced out —
in this process, and on real workers where the reconciler runs every second and the broker
redelivers the step's message while it still runs."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from journal_store.journal import DjangoJournal
from runtime.events import LeaseGranted, LeaseReleased, LeaseRenewed
from services import runs, steps
from services.control import stalled
from tests.tasks.conftest import settled, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
TTL = 1  # seconds: the test's own short lease
HANG = 4  # the step stops this long right after its first tool call: 4 leases


@pytest.fixture
def short_lease(nowhere, settings):
    """The test drives each step (tests/conftest.py), under a lease of its own length."""
    settings.STEP_LEASE_SECONDS = TTL


def test_a_step_longer_than_its_lease_keeps_it_and_nobody_else_drives_the_run(
    short_lease, settings
):
    settings.FAULT = f"hang:ToolDispatched#1:{HANG}"
    run_id = runs.start_run("repo-fix", "first-flight")
    journal = DjangoJournal()
    outcomes: list[str] = []

    def slow_worker() -> None:
        try:
            while not outcomes or outcomes[-1] == "stepped":
                outcomes.append(steps.drive_step(run_id, "slow-worker"))
        finally:
            connections.close_all()

    worker = threading.Thread(target=slow_worker)
    worker.start()
    try:
        wait_until(
            lambda: any(r.event.kind == "ToolDispatched" for r in journal.read(f"run-{run_id}")),
            60,
            "the step to reach its first tool call",
        )
        hung_at = journal.version(f"run-{run_id}")
        time.sleep(1.5 * TTL)  # the lease it was granted has run out by now
        started = journal.read(f"run-{run_id}")[0].event.t
        assert stalled({run_id: started}) == {}  # held, renewed: the reconciler leaves it be
        assert steps.drive_step(run_id, "intruder") == "busy"
        assert journal.version(f"run-{run_id}") == hung_at  # the intruder wrote nothing
    finally:
        worker.join(120)
    assert outcomes[-1] == "done" and "lost" not in outcomes

    lease = [r.event for r in journal.read(f"lease-{run_id}")]
    assert {e.holder for e in lease} == {"slow-worker"}
    # The hung step: granted once, renewed while it hung, released by the same worker.
    hung = [e for e in lease if e.at_version is not None and e.at_version < hung_at]
    last_grant = max(i for i, e in enumerate(hung) if isinstance(e, LeaseGranted))
    step = hung[last_grant:]
    assert isinstance(step[-1], LeaseReleased) and step[-1].outcome == "stepped"
    renewals = [e for e in step if isinstance(e, LeaseRenewed)]
    assert len(renewals) >= HANG // TTL  # about three a lease
    assert all(e.attempt == 1 for e in step)  # one start of that step: nobody retried it


def test_on_workers_a_step_longer_than_its_lease_and_its_redelivery_is_driven_once(
    redis_workers, fly_team
):
    """The workers' lease is 4 s, the reconciler runs every second, and Redis delivers the step
    again after 8 s: a step that hangs 12 s is still driven by its own worker alone."""
    run_id = runs.start_run("repo-fix", "first-flight")
    redis_workers.start(concurrency=2, MINUTES_FAULT="hang:ToolDispatched#2:12")
    wait_until(lambda: settled([run_id]), 120, "the run to settle", redis_workers)
    assert runs.status_of(run_id) == "done"
    journal = DjangoJournal()
    # The last step writes the run's end, then gives its lease back: the status can read done
    # a moment before that release is in the lease stream.
    wait_until(lambda: given_back(journal, run_id), 30, "the last step's release", redis_workers)
    lease = [r.event for r in journal.read(f"lease-{run_id}")]
    grants = [i for i, e in enumerate(lease) if isinstance(e, LeaseGranted)]
    steps = [lease[a:b] for a, b in zip(grants, [*grants[1:], len(lease)], strict=True)]
    # Every step: granted once, renewed by the same holder, released by it, never taken over.
    for step in steps:
        assert {e.holder for e in step} == {step[0].holder}
        assert isinstance(step[-1], LeaseReleased) and step[-1].attempt == 1
    dispatched = [
        r.version for r in journal.read(f"run-{run_id}") if r.event.kind == "ToolDispatched"
    ]
    hung = [step for step in steps if step[0].at_version < dispatched[1]][-1]
    renewals = [e for e in hung if isinstance(e, LeaseRenewed)]
    assert len(renewals) >= 12 // 4  # renewed all along the hang, by its own worker
    reference = fly_team("first-flight", park=True, started_by="operator")
    ours = [r.event for r in journal.read(f"run-{run_id}")]
    assert [e.kind for e in ours] == [e.kind for e in reference.events]
    executed = redis_workers.exec_log.read_text().splitlines()
    assert len(executed) == len(set(executed))  # no tool ran twice


def given_back(journal: DjangoJournal, run_id: str) -> bool:
    """Whether nobody holds the run's step lease: its last event is no grant or renewal (what
    it is instead, the asserts say)."""
    last = journal.last(f"lease-{run_id}")
    return last is not None and not isinstance(last.event, (LeaseGranted, LeaseRenewed))
