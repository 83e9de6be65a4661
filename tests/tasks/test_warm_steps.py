"""Steps that find their run's flight parked in this process go on without replaying it, and
write what cold steps write; a parked flight that no longer fits the journal is dropped."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.warm import WarmFlights
from services import runs, steps
from tests.runtime.helpers import facts
from tests.tasks.conftest import use_broker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture(autouse=True)
def warm(settings, tmp_path):
    use_broker("memory://", {})  # next steps go to a queue nobody reads: the test drives them
    settings.WORKSPACES = tmp_path / "workspaces"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.WARM_RUNS = 4
    settings.STEP_TURNS = 1
    yield
    steps.WARM.clear()


def events(run_id):
    return [r.event for r in DjangoJournal().read(f"run-{run_id}")]


def whole_reads(queries, run_id):
    """The statements that read the run's stream from its start."""
    return [
        q["sql"]
        for q in queries
        if f"run-{run_id}" in q["sql"] and "version > 0" in q["sql"].replace("'", "")
    ]


def comparable(run_id, recorded):
    return repr(facts(recorded)).replace(run_id, "RUN")


def test_after_its_first_step_a_run_is_driven_without_reading_its_history(fly_team):
    run_id = runs.start_run("repo-fix", "first-flight")
    outcomes, reads = [], []
    while not outcomes or outcomes[-1] == "stepped":
        with CaptureQueriesContext(connection) as queries:
            outcomes.append(steps.drive_step(run_id, "test"))
        reads.append(len(whole_reads(queries.captured_queries, run_id)))
    assert outcomes[-1] == "done" and len(outcomes) > 3
    assert reads[0] >= 1 and set(reads[1:]) == {0}  # one replay, at the first step only
    assert len(steps.WARM) == 0  # a finished flight is not kept
    reference = fly_team("first-flight", park=True, started_by="operator")
    assert comparable(run_id, events(run_id)) == comparable(reference.run_id, reference.events)
    assert flight.replay(DjangoJournal(), run_id).identical


def test_an_operators_stop_ends_a_warm_flight_and_the_resumed_run_finishes_the_same(fly_team):
    run_id = runs.start_run("repo-fix", "first-flight")
    assert steps.drive_step(run_id, "test") == "stepped"
    assert steps.drive_step(run_id, "test") == "stepped"
    runs.interrupt(run_id, "ann", "a look first")
    assert steps.drive_step(run_id, "test") == "interrupted"
    assert len(steps.WARM) == 0
    runs.resume(run_id, "ann")
    while (outcome := steps.drive_step(run_id, "test")) == "stepped":
        pass
    assert outcome == "done"
    assert flight.replay(DjangoJournal(), run_id).identical


def test_a_flight_left_behind_by_another_driver_is_dropped_and_the_run_replayed(
    fly_team, monkeypatch
):
    run_id = runs.start_run("repo-fix", "first-flight")
    assert steps.drive_step(run_id, "test") == "stepped"
    parked = steps.WARM.take(run_id, DjangoJournal().version(f"run-{run_id}"))
    assert parked is not None and parked.parked
    steps.WARM.keep(parked)
    # Another process drives the next step (cold: nothing of this process's is there).
    with monkeypatch.context() as elsewhere:
        elsewhere.setattr(steps, "WARM", WarmFlights(size=0))
        assert steps.drive_step(run_id, "other") == "stepped"
    with CaptureQueriesContext(connection) as queries:
        assert steps.drive_step(run_id, "test") == "stepped"
    assert not parked.parked  # dropped: the stream had moved on without it
    assert len(whole_reads(queries.captured_queries, run_id)) == 1  # so this step replayed
    while (outcome := steps.drive_step(run_id, "test")) == "stepped":
        pass
    assert outcome == "done"
    reference = fly_team("first-flight", park=True, started_by="operator")
    assert comparable(run_id, events(run_id)) == comparable(reference.run_id, reference.events)
