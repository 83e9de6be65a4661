"""A step that takes longer than its lease keeps it: a heartbeat renews the lease while the step
runs, so nobody else drives the run meanwhile and the step's own appends are not fenced out."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from journal_store.journal import DjangoJournal
from runtime.events import LeaseGranted, LeaseReleased, LeaseRenewed
from tasks import runs
from tasks.control import stalled
from tests.tasks.conftest import use_broker, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
TTL = 1  # seconds: the test's own short lease
HANG = 4  # the step stops this long right after its first tool call: 4 leases


@pytest.fixture(autouse=True)
def nowhere(settings, tmp_path):
    """Enqueued steps go to an in-memory broker nobody reads: the test drives each step."""
    use_broker("memory://", {})
    settings.WORKSPACES = tmp_path / "workspaces"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.STEP_LEASE_SECONDS = TTL
    yield
    use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)


def test_a_step_longer_than_its_lease_keeps_it_and_nobody_else_drives_the_run(monkeypatch):
    monkeypatch.setenv("MINUTES_FAULT", f"hang:ToolDispatched#1:{HANG}")
    run_id = runs.start_run("repo-fix", "first-flight")
    journal = DjangoJournal()
    outcomes: list[str] = []

    def slow_worker() -> None:
        try:
            while not outcomes or outcomes[-1] == "stepped":
                outcomes.append(runs.drive_step(run_id, "slow-worker"))
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
        assert runs.drive_step(run_id, "intruder") == "busy"
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
