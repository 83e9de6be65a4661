"""Cold steps on the workers resume from the agent loop's latest snapshot: they do not read the
run's whole stream, and the run writes what cold steps replaying everything write."""

from __future__ import annotations

import logging

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal
from journal_store.models import LoopSnapshot
from runtime import flight
from services import letters, runs, steps
from services.control import Control
from tests.runtime.helpers import facts
from tests.tasks.conftest import use_broker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture(autouse=True)
def cold(settings, tmp_path):
    use_broker("memory://", {})  # next steps go to a queue nobody reads: the test drives them
    settings.WORKSPACES = tmp_path / "workspaces"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.WARM_RUNS = 0  # every step is a cold start
    settings.STEP_TURNS = 1
    settings.SNAPSHOT_TURNS = 2
    yield


def whole_reads(queries, run_id):
    """The statements that read the run's stream from its start to its end."""
    return [
        q["sql"]
        for q in queries
        if f"run-{run_id}" in q["sql"] and "version > 0 ORDER BY" in q["sql"].replace("'", "")
    ]


def comparable(run_id, recorded):
    return repr(facts(recorded)).replace(run_id, "RUN")


def drive(run_id):
    outcomes, reads = [], []
    while not outcomes or outcomes[-1] == "stepped":
        with CaptureQueriesContext(connection) as queries:
            outcomes.append(steps.drive_step(run_id, "test"))
        reads.append(len(whole_reads(queries.captured_queries, run_id)))
    return outcomes, reads


@pytest.mark.parametrize(
    ("team", "scenario"),
    # repo-fix: loops that read their mail, answer a REQUEST with a deadline and ask the work
    # registry before each write keep those callbacks' state in their snapshots.
    [("solo", "solo-fix"), ("repo-fix", "first-flight")],
)
def test_cold_steps_resume_from_the_loops_snapshot_without_reading_the_whole_run(
    fly_team, settings, team, scenario, caplog
):
    run_id = runs.start_run(team, scenario)
    with caplog.at_level(logging.INFO, logger="services.steps"):
        outcomes, reads = drive(run_id)
    assert outcomes[-1] == "done"
    # The first steps read it all (no snapshot yet); then each cold step starts from one. (The
    # last step's read is the finished run's, by what reports it, not the session's.)
    assert reads[0] >= 1 and reads[1:-1].count(0) >= 3
    # Each cold step says what it replayed and what the snapshot spared it.
    said = [r.getMessage() for r in caplog.records if "cold step" in r.getMessage()]
    assert len(said) == len(outcomes)
    assert any(not m.endswith(" 0 skipped (loop snapshot)") for m in said)
    # The run is done: nothing will resume it, and its snapshot is gone with it.
    assert not LoopSnapshot.objects.exists()
    recorded = [r.event for r in DjangoJournal().read(f"run-{run_id}")]
    reference = fly_team(scenario, team=team, park=True, started_by="operator")
    assert comparable(run_id, recorded) == comparable(reference.run_id, reference.events)
    assert flight.replay(DjangoJournal(), run_id).identical


def test_cold_steps_whose_snapshots_were_deleted_replay_the_run_the_same(fly_team, settings):
    run_id = runs.start_run("solo", "solo-fix")
    outcomes, kept = [], []
    while not outcomes or outcomes[-1] == "stepped":
        outcomes.append(steps.drive_step(run_id, "test"))
        kept.append(LoopSnapshot.objects.exists())
        LoopSnapshot.objects.all().delete()  # lost after every step
    assert outcomes[-1] == "done"
    assert any(kept)  # there were snapshots to lose
    recorded = [r.event for r in DjangoJournal().read(f"run-{run_id}")]
    reference = fly_team("solo-fix", team="solo", park=True, started_by="operator")
    assert comparable(run_id, recorded) == comparable(reference.run_id, reference.events)
    assert flight.replay(DjangoJournal(), run_id).identical


def test_a_run_ended_by_a_discarded_letter_leaves_no_snapshot():
    """A discarded infrastructure letter ends the run without a step (services/letters.py):
    its loop's snapshot goes with it, as after a step's verdict."""
    run_id = runs.start_run("solo", "solo-fix")
    for _ in range(20):
        assert steps.drive_step(run_id, "test") == "stepped"
        if LoopSnapshot.objects.filter(stream=f"run-{run_id}").exists():
            break
    else:
        raise AssertionError("no snapshot was kept")
    other = runs.start_run("solo", "solo-fix")
    while not LoopSnapshot.objects.filter(stream=f"run-{other}").exists():
        assert steps.drive_step(other, "test") == "stepped"
    letter = Control(run_id).dead_letter("the step kept dying", 3, "").letter_id
    letters.decide_letter(letter, "discard", "ann", "the host is gone")
    assert runs.status_of(run_id) == "discarded"
    assert list(LoopSnapshot.objects.values_list("stream", flat=True)) == [f"run-{other}"]
