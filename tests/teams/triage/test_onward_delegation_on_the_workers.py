"""On the workers, where each specialist runs as a task of its own, a part handed on is sent
off like any sub-task once the limits allow it, and a hand-back is refused before anything is
sent: the run ends as it does on the command line."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.events import DelegationRefused, SubtaskDegraded, TeamFinished
from services import runs, specialists, steps

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]


def drive(run_id, limit=200):
    for _ in range(limit):
        outcome = steps.drive_step(run_id, "test")
        if outcome != "stepped":
            return outcome
    raise AssertionError("never settled")


def test_a_hand_back_is_refused_on_the_workers_and_only_allowed_parts_are_sent(monkeypatch):
    sent: list[str] = []
    monkeypatch.setattr(specialists, "dispatch", lambda run, sub, handoff: sent.append(sub))
    run_id = runs.start_run("support-triage", "delegation-cycle")
    assert drive(run_id) == "waiting"
    assert sent == ["S1", "S2", "S3"]
    for sub in list(sent):
        specialists.run_specialist(run_id, sub, "test-worker")
    assert drive(run_id) == "waiting"
    assert sent == ["S1", "S2", "S3", "S2.1"]  # the part kb-worker handed on, sent once
    specialists.run_specialist(run_id, "S2.1", "test-worker")
    assert drive(run_id) == "done"
    assert sent == ["S1", "S2", "S3", "S2.1"]  # the hand-back was never sent
    events = [r.event for r in DjangoJournal().read(f"run-{run_id}")]
    [refused] = [e for e in events if isinstance(e, DelegationRefused)]
    assert (refused.by, refused.to, refused.rule) == ("returns-worker", "kb-worker", "cycle")
    assert [e.task_id for e in events if isinstance(e, SubtaskDegraded)] == ["S3", "S2.1"]
    [finished] = [e for e in events if isinstance(e, TeamFinished)]
    assert finished.status == "done" and "its hand-on to kb-worker was refused" in finished.reason
