"""A support-triage run honours Interrupt at its next boundary, like every other team: it ends
"interrupted" (RunInterrupted journalled), not "done", and a resume carries it to its verdict."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime.events import RunInterrupted, RunResumed, TeamFinished
from services import runs
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def inline(inline_specialists):
    """Specialists run inline here (tests/dashboard/conftest.py)."""


def kinds(run_id: str) -> list[str]:
    return [r.event.kind for r in DjangoJournal().read(f"run-{run_id}")]


def test_a_triage_run_stopped_before_its_first_step_ends_interrupted_not_done(owner):
    run_id = runs.start_run("support-triage", None, by="owner")
    runs.interrupt(run_id, "owner", "wrong ticket")
    assert drive(run_id) == "interrupted"
    assert "TeamFinished" not in kinds(run_id)
    assert kinds(run_id)[-1] == RunInterrupted.kind
    assert runs.status_of(run_id) == "interrupted"
    assert RunSummary.objects.get(run_id=run_id).status == "interrupted"


def test_an_interrupted_triage_run_resumes_to_its_verdict(owner):
    run_id = runs.start_run("support-triage", None, by="owner")
    runs.interrupt(run_id, "owner", "")
    drive(run_id)
    runs.resume(run_id, "owner")
    drive(run_id)
    journal = kinds(run_id)
    assert journal.count(RunInterrupted.kind) == 1 and journal.count(RunResumed.kind) == 1
    assert journal[-1] == TeamFinished.kind
