"""A fork made while a fan-out run's specialists were at work: nobody sent them off in the fork
(the parent's were sent when their briefs were written), and their deadlines counted from the
parent's hand-off times, so at the fork's first look every one had timed out and was run again
from the start (a fork of a support-triage run spent 730 tokens where its parent spent 500).
The fork now sends them off when it is written, each resuming from its copied stream, and a
deadline counts the time before the fork out."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime.events import RunForked, WorkerHandedOff
from runtime.fanout.engine import handed_at
from runtime.journal import MemoryJournal
from runtime.session import Session
from services import forks, runs
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def inline(inline_specialists):
    """Specialists run inline here (tests/dashboard/conftest.py)."""


def kinds(run_id: str) -> list[str]:
    return [r.event.kind for r in DjangoJournal().read(f"run-{run_id}")]


def test_a_fork_made_while_specialists_were_at_work_resumes_them_rather_than_rerunning(owner):
    parent = runs.start_run("support-triage", None, by="owner")
    assert drive(parent) != "stepped"
    journal = DjangoJournal()
    # The fork point: a specialist's first model answer, in its own stream (it is at work
    # there; its report, and the others', come later in the run's stream).
    worker = sorted({r.stream for r in journal.read_prefix(f"worker-{parent}-")})[0]
    at = next(r for r in journal.read(worker) if r.event.kind == "ModelResponded")
    child = forks.fork_run(parent, at.position, forks.Changes(), "owner")
    assert drive(child) != "stepped"
    assert "WorkerTimedOut" not in kinds(child)
    assert kinds(child)[-1] == "TeamFinished"
    p, c = RunSummary.objects.get(run_id=parent), RunSummary.objects.get(run_id=child)
    assert c.status == p.status
    # Nothing was run again: the fork spent what its parent did, its prefix included.
    assert c.tokens == p.tokens


def test_a_deadline_counts_the_time_before_a_fork_out():
    handed = WorkerHandedOff(run_id="r-1", task_id="t-1", handoff={}, t=100.0)
    later = WorkerHandedOff(run_id="r-1", task_id="t-2", handoff={}, t=110.0)
    forked = RunForked(run_id="r-1", parent="r-0", at=9, number=3, by="ann", t=1000.0)
    session = Session(MemoryJournal(), "r-1", recorded=[handed, later, forked])
    assert handed_at(session, "t-1") == 100.0 + (1000.0 - 110.0)
    assert handed_at(session, "t-2") == 110.0 + (1000.0 - 110.0)
    plain = Session(MemoryJournal(), "r-1", recorded=[handed, later])
    assert handed_at(plain, "t-1") == 100.0
