"""A step whose lease ran out unrenewed (the database would not take its renewals) stops where
it is, writing nothing more, and the run goes on from its journal when driven again.

Nobody had taken the lease over, so its fence still stood: the step went on asking the model
and dispatching tools under a lease its heartbeat had given up, each git and tool run refused
(children.Ended) and that refusal journalled as the tool's answer, until its turns ran out.
Now the heartbeat that takes the lease for lost gives up the step's writer: its next write, or
its next tool run, model call, commit or merge (`check_standing`), is refused, so the step ends
at the latest at its next turn, and the run is sent on to whoever takes the lease next."""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError, connections

from journal_store.journal import DjangoJournal
from runtime.coordination.leases import Leases
from runtime.events import LeaseReleased
from services import queue, runs, steps
from tests.tasks.conftest import wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]
TTL = 1  # seconds: the test's own short lease
HANG = 3 * TTL  # the step waits this long right after its second tool call is dispatched


def dispatched(journal: DjangoJournal, run_id: str) -> int:
    return [r.event.kind for r in journal.read(f"run-{run_id}")].count("ToolDispatched")


@pytest.mark.parametrize("warm", [0, 4], ids=["cold", "warm"])
def test_a_step_whose_lease_ran_out_writes_nothing_more_and_the_run_goes_on(
    settings, monkeypatch, tmp_path, fly_team, warm
):
    settings.STEP_LEASE_SECONDS = TTL
    settings.STEP_TURNS = 100  # the whole run in one step, had nothing stopped it
    settings.WARM_RUNS = warm
    settings.FAULT = f"hang:ToolDispatched#2:{HANG}"
    settings.EXEC_LOG = str(tmp_path / "exec.log")
    broken = threading.Event()  # the database takes no renewal once set
    renew = Leases.renew

    def renewal(self, lease, ttl):
        if broken.is_set():
            raise OperationalError("database is locked")
        return renew(self, lease, ttl)

    monkeypatch.setattr(Leases, "renew", renewal)
    run_id = runs.start_run("repo-fix", "first-flight")
    advanced: list[str] = []  # the steps sent from here on
    monkeypatch.setattr(queue, "advance", lambda run_id, **kw: advanced.append(run_id))
    journal = DjangoJournal()
    outcomes: list[str] = []

    def step() -> None:
        try:
            outcomes.append(steps.drive_step(run_id, "w1"))
        finally:
            connections.close_all()

    worker = threading.Thread(target=step)
    worker.start()
    try:
        wait_until(lambda: dispatched(journal, run_id) >= 2, 60, "the second dispatch")
        broken.set()  # while the step waits after it: its lease runs out within a second
        hung_at = journal.version(f"run-{run_id}")
    finally:
        worker.join(120)
    assert outcomes == ["lost"]
    assert journal.version(f"run-{run_id}") == hung_at  # nothing written after the loss
    ran = (tmp_path / "exec.log").read_text().split("\n")
    assert [line.split()[2] for line in ran if line] == ["1"]  # the second call never ran
    released = journal.last(f"lease-{run_id}").event
    assert isinstance(released, LeaseReleased) and released.outcome == "lost"
    assert advanced == [run_id]  # nobody took it: the run's next step is sent at once

    broken.clear()
    while outcomes[-1] in ("lost", "stepped"):
        outcomes.append(steps.drive_step(run_id, "w2"))
    assert outcomes[-1] == "done"
    reference = fly_team("first-flight", park=True, started_by="operator")
    ours = [r.event for r in journal.read(f"run-{run_id}")]
    assert [e.kind for e in ours] == [e.kind for e in reference.events]
    ran = (tmp_path / "exec.log").read_text().split("\n")
    assert len([line for line in ran if line]) == len(set(ran) - {""})  # none ran twice
