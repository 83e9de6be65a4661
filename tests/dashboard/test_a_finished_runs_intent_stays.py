"""A finished run's task intent cannot be superseded (409, saying the run is over and that a
fork is how its course changes), and nothing is recorded: it was accepted, and every fork of
the run was then dead-lettered, its merge "decided under version 1 of intent task-<run>".
A fork serves its own intent, task-<fork>, holding the versions of the parent's declared before
the fork point: a fork of a run superseded after it ended (before this was refused) finishes,
and a fork from after a supersession made while the parent ran is refused where the parent was.
"""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from journal_store.transfer import export_lines
from runtime import flight
from runtime.coordination.gates import Intents
from runtime.events import IntentCarried, MutationRefused
from services import runs
from services.steps import drive_step
from tests.dashboard.conftest import drive, run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def fork(api, parent: str, at: int) -> str:
    answer = api.post(f"/api/runs/{parent}/fork", {"at": at}, "application/json")
    assert answer.status_code == 201, answer.content
    return answer.json()["run_id"]


def carried_at(run_id: str) -> int:
    return next(
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if isinstance(r.event, IntentCarried)
    )


def test_superseding_a_finished_runs_task_is_a_409_and_records_nothing(api):
    run_id = run_of("parallel-writers")
    assert runs.status_of(run_id) == "done"
    before = StoredEvent.objects.count()
    change = {"statement": "leave the slug alone", "reason": "changed my mind", "version": 1}
    answer = api.post(f"/api/intents/task-{run_id}", change, "application/json")
    assert answer.status_code == 409, answer.content
    detail = answer.json()["detail"]
    assert f"intent task-{run_id} is run {run_id}'s task, and the run is over (done)" in detail
    assert f"fork it (the Fork form on its page, or POST /api/runs/{run_id}/fork)" in detail
    assert StoredEvent.objects.count() == before
    assert api.get(f"/api/intents/task-{run_id}").json()["version"] == 1


def test_a_fork_of_a_run_superseded_after_it_ended_goes_on_under_its_own_intent(api):
    parent = run_of("parallel-writers")
    # As it was before the refusal: a version 2 declared after the run ended.
    Intents(DjangoJournal()).declare(f"task-{parent}", "something else", "demo", "too late")
    child = fork(api, parent, carried_at(parent))
    assert drive(child) == "done"
    assert RunSummary.objects.get(run_id=child).status == "done"
    journal = DjangoJournal()
    [carried] = [
        r.event for r in journal.read(f"run-{child}") if isinstance(r.event, IntentCarried)
    ]
    assert (carried.intent_id, carried.intent_version) == (f"task-{child}", 1)
    assert journal.version(f"intent-task-{child}") == 0  # the later version is not its
    assert not [r for r in journal.read(f"run-{child}") if isinstance(r.event, MutationRefused)]
    assert api.get(f"/api/intents/task-{child}").json()["version"] == 1
    assert flight.replay(journal, child).identical


def test_a_fork_from_after_a_supersession_holds_that_version(api):
    parent = run_of("first-flight", steps=1)
    Intents(DjangoJournal()).declare(f"task-{parent}", "leave it", "demo", "release freeze")
    declared = DjangoJournal().read(f"intent-task-{parent}")[0].position
    drive(parent)
    journal = DjangoJournal()
    after = next(r.position for r in journal.read(f"run-{parent}") if r.position > declared)
    child = fork(api, parent, after)
    [version_2] = [r.event for r in journal.read(f"intent-task-{child}")]
    assert (version_2.intent_id, version_2.intent_version) == (f"task-{child}", 2)
    drive(child)
    refused = [
        r.event for r in journal.read(f"run-{child}") if isinstance(r.event, MutationRefused)
    ]
    assert [(e.check, e.held, e.current) for e in refused] == [("intent", 1, 2)]
    assert f"intent task-{child}" in refused[0].reason
    # The copied version is a person's word about the intent, as declared, no event of the
    # fork's: its export holds no decision, and another store takes it.
    held = [r for r in journal.read(f"intent-task-{child}")]
    assert [r.event.run_id for r in held] == [""]
    exported = "".join(export_lines(child))
    assert "IntentDeclared" not in exported


def test_a_running_runs_task_may_still_be_superseded(api):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    while not any(
        isinstance(r.event, IntentCarried) for r in DjangoJournal().read(f"run-{run_id}")
    ):
        assert drive_step(run_id, "test") == "stepped"
    change = {"statement": "leave it", "reason": "release freeze", "version": 1}
    answer = api.post(f"/api/intents/task-{run_id}", change, "application/json")
    assert answer.status_code == 200 and answer.json()["version"] == 2
