"""A step whose lease was taken over, and which then raises, records no failure of the run.

Its StepFailed went to the control stream unfenced: the failure of a worker that no longer
drove the run (often made by the takeover itself, the workspace or the stream changed under
it) was written beside the new driver's steps, and the run read as failing, with that error,
while another worker drove it. Only StaleEpoch was taken as "lost"; now any failure of a step
is recorded only while its lease stands."""

from __future__ import annotations

import time

import pytest

from journal_store.journal import DjangoJournal
from runtime import streams
from runtime.events import LeaseGranted, StepFailed
from runtime.warm import WarmFlight
from services import runs, steps
from services.control import Control

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]


def failures(run_id: str) -> list[StepFailed]:
    return [e for e in Control(run_id).events() if isinstance(e, StepFailed)]


@pytest.fixture
def failing_step(monkeypatch):
    """Steps raise; with `taken` set, another worker takes the run's lease first (as after the
    step's lease ran out while it hung)."""
    taken = {"over": False}

    def step(self, turns, until, began=None):
        run_id = self.session.run_id
        if taken["over"]:
            journal = DjangoJournal()
            lease = streams.driver_lease(run_id)
            grant = LeaseGranted(
                run_id=run_id,
                resource=run_id,
                holder="another-host:1",
                expires=time.time() + 60,
                at_version=journal.version(streams.journal(run_id)),
                attempt=1,
            )
            journal.append(lease, [grant], journal.version(lease))
        raise RuntimeError("the workspace changed under it")

    monkeypatch.setattr(WarmFlight, "step", step)
    return taken


def test_a_step_that_fails_under_its_own_lease_is_recorded(failing_step):
    run_id = runs.start_run("repo-fix", "first-flight")
    assert steps.drive_step(run_id, "test") == "failed-step"
    assert [f.error.message for f in failures(run_id)] == ["the workspace changed under it"]


def test_a_step_taken_over_before_it_fails_records_nothing(failing_step):
    run_id = runs.start_run("repo-fix", "first-flight")
    failing_step["over"] = True
    assert steps.drive_step(run_id, "test") == "lost"
    assert failures(run_id) == []
    assert Control(run_id).failing() is None
