"""A run's duration stops while it waits for a person and, once it goes on, leaves the wait
out: it read the run's time up to the wait while it waited, then the whole wall clock, wait
and all, once it was resumed (25 s of work interrupted for an hour read "1 h 0 min"). The wait
is said beside it on the run's page and in the API (`waited_seconds`), and sorting by
duration sorts by the same figure."""

from __future__ import annotations

from datetime import timedelta

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime.events import (
    DeadLettered,
    DeadLetterRetried,
    RunInterrupted,
    RunResumed,
    TeamFinished,
    TeamStarted,
)

pytestmark = pytest.mark.django_db

T0 = 1_790_000_000.0


def run(run_id: str, *events) -> None:
    started = TeamStarted(run_id=run_id, team="solo", scenario="", task="t", t=T0)
    DjangoJournal().append(f"run-{run_id}", [started, *events], 0)


def waited_and_not() -> None:
    """r-waited: 25 s of work, interrupted for an hour; r-minute: a minute's, no wait."""
    run(
        "r-waited",
        RunInterrupted(run_id="r-waited", by="ann", t=T0 + 10),
        RunResumed(run_id="r-waited", by="ann", t=T0 + 3_610),
        TeamFinished(run_id="r-waited", status="done", reason="ok", t=T0 + 3_625),
    )
    run("r-minute", TeamFinished(run_id="r-minute", status="done", reason="ok", t=T0 + 60))
    projection.catch_up()


def test_a_resumed_run_counts_its_work_not_its_wait(as_owner):
    waited_and_not()
    header = as_owner.get("/runs/r-waited/header").content.decode()
    stood = "and 1 h 0 min stood still (interrupted or dead-lettered)"
    assert f'<dd>25 s <span class="muted">{stood}</span></dd>' in header
    assert as_owner.get("/api/runs/r-waited").json()["waited_seconds"] == 3_600.0
    assert as_owner.get("/api/runs/r-minute").json()["waited_seconds"] == 0.0
    listed = as_owner.get("/api/runs?sort=duration").json()["items"]
    assert [r["run_id"] for r in listed] == ["r-minute", "r-waited"]
    page = as_owner.get("/?sort=duration").content.decode()
    assert page.index("r-minute") < page.index("r-waited")
    caught_up = RunSummary.objects.get(run_id="r-waited").waited
    projection.rebuild(["runs"])
    assert RunSummary.objects.get(run_id="r-waited").waited == caught_up


def test_a_dead_letters_wait_is_left_out_once_it_is_retried(as_owner):
    run("r-letter")
    DjangoJournal().append(
        "control-r-letter",
        [
            DeadLettered(run_id="r-letter", letter_id="r-letter:1", reason="stuck", t=T0 + 20),
            DeadLetterRetried(run_id="r-letter", letter_id="r-letter:1", by="ann", t=T0 + 120),
        ],
        0,
    )
    DjangoJournal().append(
        "run-r-letter",
        [TeamFinished(run_id="r-letter", status="done", reason="ok", t=T0 + 150)],
        1,
    )
    projection.catch_up()
    row = RunSummary.objects.get(run_id="r-letter")
    assert row.waited.total_seconds() == 100.0
    assert (row.finished_at - row.started_at - row.waited).total_seconds() == 50.0


def test_the_migration_fills_the_wait_of_runs_projected_before_it():
    """Migration 0033: a run that went on after a wait before `waited` was kept gets it, as a
    rebuild gives it; a run that never waited is left as it is."""
    import importlib
    import json
    from types import SimpleNamespace

    from django.apps import apps
    from django.db import connection

    from journal_store.models import RunState

    migration = importlib.import_module("journal_store.migrations.0033_run_waited_filled")
    waited_and_not()
    projected = list(RunSummary.objects.order_by("run_id").values_list("run_id", "waited"))
    # As the store held them before 0032: no wait in the state, none in the column.
    for stored in RunState.objects.filter(fold="summary"):
        state = json.loads(stored.state)
        state.pop("waited")
        RunState.objects.filter(pk=stored.pk).update(state=json.dumps(state))
    RunSummary.objects.update(waited=timedelta(0))
    migration.fill(apps, SimpleNamespace(connection=connection))
    assert list(RunSummary.objects.order_by("run_id").values_list("run_id", "waited")) == projected
    waited = RunState.objects.get(run_id="r-waited", fold="summary")
    assert json.loads(waited.state)["waited"] == 3_600.0
    projection.rebuild(["runs"])
    assert list(RunSummary.objects.order_by("run_id").values_list("run_id", "waited")) == projected


def test_the_duration_is_kept_once_the_clock_stops_and_none_while_it_runs():
    """The list sorts by a duration kept in the run's row (migration 0040: an index of it
    serves a page), the figure its page says; a run still running has none yet, and a rebuild
    gives the same."""
    waited_and_not()
    run("r-running")  # started, not finished
    projection.catch_up()

    def kept() -> dict[str, timedelta | None]:
        return dict(RunSummary.objects.values_list("run_id", "duration"))

    assert kept() == {
        "r-waited": timedelta(seconds=25),
        "r-minute": timedelta(seconds=60),
        "r-running": None,
    }
    projection.rebuild(["runs"])
    assert kept()["r-waited"] == timedelta(seconds=25) and kept()["r-running"] is None
    # Finished, it has one: the projector moves it as the run's clock stops.
    DjangoJournal().append(
        "run-r-running",
        [TeamFinished(run_id="r-running", status="done", reason="ok", t=T0 + 5)],
        1,
    )
    projection.catch_up()
    assert kept()["r-running"] == timedelta(seconds=5)


def test_migration_0038_fills_the_duration_of_runs_projected_before_it():
    """As the projector now keeps it: the runs stored before get theirs from their columns."""
    import importlib
    from types import SimpleNamespace

    from django.apps import apps
    from django.db import connection

    migration = importlib.import_module("journal_store.migrations.0040_run_duration")
    waited_and_not()
    run("r-running")
    projection.catch_up()
    projected = list(RunSummary.objects.order_by("run_id").values_list("run_id", "duration"))
    assert [d for _, d in projected].count(None) == 1
    RunSummary.objects.update(duration=None)  # as the store held them before 0038
    migration.fill(apps, SimpleNamespace(connection=connection))
    assert (
        list(RunSummary.objects.order_by("run_id").values_list("run_id", "duration")) == projected
    )
