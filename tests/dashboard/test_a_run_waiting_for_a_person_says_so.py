"""A run that waits for a person says so at its stage: a support desk's run parked on a conflict
read "complete" (its escalated verdict finished its work), and a run with a dead letter the
stage its work had reached. The stage is now "waiting", with what for (a conflict, a dead
letter), in the runs list, the run's header, its resume point and the API alike; a decision
takes it on to its work's stage. Migration 0020 folds the runs projected before again."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from journal_store import projection
from journal_store.models import Conflict, DeadLetter, RunState, RunSummary
from services import letters, review, runs
from services.control import Control
from tests.dashboard.conftest import api_time, drive, run_of, stage_waiting

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("journal_store", "0019_letters_open")]


def said(client, run_id: str) -> dict:
    """The stage as each place shows it."""
    projection.catch_up()
    row = RunSummary.objects.get(run_id=run_id)
    api = client.get(f"/api/runs/{run_id}").json()
    point = client.get(f"/api/runs/{run_id}/resume-point").json()
    listed = [r for r in client.get("/api/runs").json()["items"] if r["run_id"] == run_id]
    return {
        "column": (row.stage, row.waiting_for),
        "api": (api["stage"], api["waiting_for"]),
        "listed": (listed[0]["stage"], listed[0]["waiting_for"]),
        "point": (point["stage"], [w["what"] for w in point["waiting_for"]]),
        "page": client.get("/").content.decode(),
        "header": client.get(f"/runs/{run_id}/header").content.decode(),
    }


@pytest.fixture
def parked(owner) -> tuple[str, str]:
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "C-1"})
    assert drive(run_id) == "escalated"
    (conflict,) = Conflict.objects.filter(run_id=run_id)
    return run_id, conflict.conflict_id


def test_a_run_parked_on_a_conflict_waits_for_a_person_until_one_decides(as_reviewer, parked):
    run_id, conflict_id = parked
    found = said(as_reviewer, run_id)
    assert found["column"] == found["api"] == found["listed"] == ("waiting", "conflict")
    assert found["point"] == ("waiting", ["conflict"])
    point = as_reviewer.get(f"/api/runs/{run_id}/resume-point").json()
    assert point["waiting_for"] == [{"what": "conflict", "id": conflict_id}]
    opened = Conflict.objects.get(pk=conflict_id).created_at
    assert (
        stage_waiting("conflict", opened).removeprefix("<dd>").removesuffix("</dd>")
        in (found["page"])
    )
    assert stage_waiting("conflict", opened) in found["header"]
    assert as_reviewer.get(f"/api/runs/{run_id}").json()["waiting_since"] == api_time(opened)

    review.resolve(conflict_id, "none", "reviewer", "neither is known yet")
    found = said(as_reviewer, run_id)
    assert found["column"] == found["api"] == found["listed"] == ("complete", "")
    assert found["point"] == ("complete", [])
    assert "<dd>complete</dd>" in found["header"]
    assert as_reviewer.get(f"/api/runs/{run_id}").json()["waiting_since"] is None
    # A rebuild gives what the incremental path gave.
    projection.rebuild(["runs"])
    assert (RunSummary.objects.get(run_id=run_id).stage) == "complete"


def test_a_dead_letter_waits_and_a_retry_goes_on_from_the_stage_it_stood_at(as_reviewer, owner):
    run_id = run_of("first-flight", steps=1)
    before = said(as_reviewer, run_id)["column"]
    assert before[0] not in ("waiting", "complete")
    letter = Control(run_id).dead_letter("a step kept failing", 3, "Boom")
    found = said(as_reviewer, run_id)
    assert found["column"] == found["api"] == found["listed"] == ("waiting", "dead letter")
    assert found["point"] == ("waiting", ["dead letter"])
    opened = DeadLetter.objects.get(pk=letter.letter_id).created_at
    assert stage_waiting("dead letter", opened) in found["header"]
    projection.rebuild(["runs"])
    assert RunSummary.objects.get(run_id=run_id).waiting_for == "dead letter"

    letters.decide_letter(letter.letter_id, "retry", "reviewer", "try again")
    assert said(as_reviewer, run_id)["column"] == before
    drive(run_id)
    assert said(as_reviewer, run_id)["column"] == ("complete", "")


def test_migration_0020_folds_the_waiting_runs_projected_before_it(parked):
    run_id, _ = parked
    projection.catch_up()
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        # As a store before 0020 held it: a resume point without what is open, at "complete".
        stored = RunState.objects.get(run_id=run_id, fold="resume_point")
        state = json.loads(stored.state)
        state = {k: v for k, v in state.items() if k not in ("open", "escalated")}
        RunState.objects.filter(pk=stored.pk).update(state=json.dumps(state))
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE projection_run SET stage = 'complete' WHERE run_id = %s", [run_id]
            )
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())  # 0020 and any after it
    row = RunSummary.objects.get(run_id=run_id)
    assert (row.stage, row.waiting_for) == ("waiting", "conflict")
    assert "open" in json.loads(RunState.objects.get(run_id=run_id, fold="resume_point").state)


def test_a_task_the_harness_dead_lettered_waits_and_a_discard_ends_the_run(as_reviewer, owner):
    run_id = run_of("reject-loop")  # the reviewer keeps rejecting: the task goes to a person
    found = said(as_reviewer, run_id)
    assert found["column"] == found["api"] == found["listed"] == ("waiting", "dead letter")
    letters.decide_letter(f"{run_id}:1", "discard", "reviewer", "not worth it")
    drive(run_id)
    assert said(as_reviewer, run_id)["column"] == ("complete", "")
