"""The metrics' oldest open item of the runs a date filter chose (services/metrics.py
oldest_open) is the oldest of the items opened from the filter's first day on and of the items
of the runs that waited since before they started (a journal whose times run backwards: an
imported one, clocks that disagree), found by the runs' `waiting_since` (migration 0055):
never the walk of every open item opened before the first day it was. The same item the walk names, on stores whose
times run backwards, under every filter; and `waiting_since` is what the projector, a rebuild
and migration 0054 all say."""

from __future__ import annotations

import importlib
import json
import random
import time
from datetime import UTC, date, datetime
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from journal_store import projection, queues, run_columns
from journal_store.journal import DjangoJournal
from journal_store.models import RunState, RunSummary
from runtime import events as ev
from services import metrics
from tests.dashboard.polls import park

pytestmark = pytest.mark.django_db

DAY = 86_400.0
NOW = time.time()
FILL = importlib.import_module("journal_store.migrations.0054_run_waiting_since")


def started(run_id: str, at: float, team: str = "support-desk") -> None:
    """A run whose first event is at `at` (its start), of `team`."""
    event = ev.TeamStarted(run_id=run_id, team=team, scenario="lost-update", task="t", t=at)
    DjangoJournal().append(f"run-{run_id}", [event], 0)


def lettered(run_id: str, letter: str, at: float) -> None:
    event = ev.DeadLettered(
        run_id=run_id, letter_id=letter, reason="r", attempts=1, last_error="e", t=at
    )
    journal = DjangoJournal()
    journal.append(f"run-{run_id}", [event], journal.version(f"run-{run_id}"))


def parked(run_id: str, conflict: str, at: float) -> None:
    park(run_id, conflict, t=at)


def resolved(run_id: str, conflict: str, at: float) -> None:
    event = ev.ConflictResolved(
        run_id=run_id, conflict_id=conflict, choice="none", value=None, by="rosa", reason="r", t=at
    )
    journal = DjangoJournal()
    journal.append(f"conflict-{conflict}", [event], journal.version(f"conflict-{conflict}"))


def day_of(at: float) -> date:
    return datetime.fromtimestamp(at, UTC).date()


def walked(chosen: metrics.MetricsFilter) -> dict | None:
    """What the walk said: every open item of the chosen runs, oldest first, the first."""
    found = []
    for queue in queues.QUEUES:
        rows = chosen.items(queue.model._default_manager.all())
        if (item := queues.oldest_open(queue, rows)) is not None:
            found.append((item.created_at, item.position, queue.name, item))
    if not found:
        return None
    since, _, name, item = min(found, key=lambda each: each[:2])
    return {"queue": name, "id": item.pk, "run_id": item.run_id, "since": since}


def test_an_item_opened_before_its_run_started_is_the_oldest_of_the_week():
    started("r-old", NOW - 20 * DAY)
    lettered("r-old", "l-old", NOW - 20 * DAY)  # older than all, but its run is not chosen
    started("r-back", NOW - 2 * DAY)
    parked("r-back", "c-back", NOW - 10 * DAY)  # a journal whose times run backwards
    started("r-new", NOW - DAY)
    lettered("r-new", "l-new", NOW - DAY)
    projection.catch_up()
    week = metrics.MetricsFilter(since=day_of(NOW - 7 * DAY))
    assert metrics.oldest_open(week)["id"] == "c-back"
    back = RunSummary.objects.get(run_id="r-back")
    assert back.waiting_since == datetime.fromtimestamp(NOW - 10 * DAY, UTC)
    assert back.waiting_since < back.started_at
    # Decided, it no longer waits: the week's oldest is the other run's, and the run leaves
    # the index of those that waited since before they started.
    resolved("r-back", "c-back", NOW)
    projection.catch_up()
    assert RunSummary.objects.get(run_id="r-back").waiting_since is None
    assert metrics.oldest_open(week)["id"] == "l-new"
    assert metrics.oldest_open(metrics.MetricsFilter())["id"] == "l-old"


@pytest.mark.parametrize("early", [metrics.EARLY, 1], ids=["listed", "queried"])
def test_the_oldest_is_the_walks_under_every_filter_on_stores_whose_times_run_backwards(
    early, monkeypatch
):
    monkeypatch.setattr(metrics, "EARLY", early)  # the early runs as a list, or as a query
    rng = random.Random(15)
    for n in range(60):
        run, start = f"r{n:02}", NOW - rng.uniform(0, 30) * DAY
        team = rng.choice(["support-desk", "repo-fix"])
        if n >= 55:  # the last five a team begun two days ago: its items opened after most
            team, start = "solo", NOW - rng.uniform(0, 2) * DAY
        started(run, start, team=team)
        for k in range(rng.choice([0, 1, 1, 2])):
            # Mostly after the start; a fifth before it, by up to ten days.
            at = (
                start + rng.uniform(0, DAY)
                if rng.random() > 0.2
                else start - rng.uniform(0, 10) * DAY
            )
            if rng.random() < 0.5:
                lettered(run, f"l{n:02}-{k}", at)
            else:
                parked(run, f"c{n:02}-{k}", at)
                if rng.random() < 0.4:
                    resolved(run, f"c{n:02}-{k}", NOW)
    projection.catch_up()
    early = RunSummary.objects.exclude(waiting_since=None)
    assert any(r.waiting_since < r.started_at for r in early), "no run waited before its start"
    # Alone, a team's, a scenario's or a model's runs start from the least time they waited
    # since (least_waiting); with a date, from the first day (and the early runs).
    filters = [metrics.MetricsFilter(), metrics.MetricsFilter(scenario="lost-update")]
    filters += [metrics.MetricsFilter(team=t) for t in ("solo", "repo-fix", "support-desk")]
    filters += [metrics.MetricsFilter(model="nothing-asked"), metrics.MetricsFilter(team="none")]
    for back in (1, 3, 7, 12, 20, 29, 31):
        since = day_of(NOW - back * DAY)
        filters += [
            metrics.MetricsFilter(since=since),
            metrics.MetricsFilter(since=since, team="repo-fix"),
            metrics.MetricsFilter(since=since, until=day_of(NOW - DAY)),
            metrics.MetricsFilter(until=since),
        ]
    named = set()
    for chosen in filters:
        assert metrics.oldest_open(chosen) == walked(chosen), chosen
        named.add((metrics.oldest_open(chosen) or {}).get("id"))
    assert len(named) > 5  # the filters name many items, not one


def test_a_rebuild_and_migration_0054_say_what_the_projector_said():
    started("r-a", NOW - 3 * DAY)
    parked("r-a", "c-a", NOW - 9 * DAY)
    lettered("r-a", "l-a", NOW - 4 * DAY)
    started("r-b", NOW - 2 * DAY)
    lettered("r-b", "l-b", NOW - DAY)
    started("r-c", NOW - DAY)  # nothing waits
    projection.catch_up()
    said = dict(RunSummary.objects.values_list("run_id", "waiting_since"))
    assert said == {
        "r-a": datetime.fromtimestamp(NOW - 9 * DAY, UTC),
        "r-b": datetime.fromtimestamp(NOW - DAY, UTC),
        "r-c": None,
    }
    projection.rebuild()
    assert dict(RunSummary.objects.values_list("run_id", "waiting_since")) == said
    RunSummary.objects.update(waiting_since=None)  # as 0054 finds the runs stored before it
    FILL.fill(apps, SimpleNamespace(connection=connection))
    assert dict(RunSummary.objects.values_list("run_id", "waiting_since")) == said
    FILL.fill(apps, SimpleNamespace(connection=connection))  # run again: the same
    assert dict(RunSummary.objects.values_list("run_id", "waiting_since")) == said
    # A time stored before times were bounded is brought within them, not raised on.
    stored = RunState.objects.get(run_id="r-b", fold="metrics")
    state = json.loads(stored.state)
    state["letters"]["l-b"] = 1e20
    stored.state = json.dumps(state)
    stored.save()
    FILL.fill(apps, SimpleNamespace(connection=connection))
    assert RunSummary.objects.get(run_id="r-b").waiting_since.year == 2999


def test_a_time_stored_before_times_were_bounded_does_not_stop_the_summary():
    # An event stored before its times were bounded still reads (runtime/events/times.py):
    # its run's summary takes the bound, where formatting the time raised for the run.
    state = {"parked": {"c-far": 1e20}, "letters": {"l-nan": float("nan"), "l-ok": 5.0}}
    assert run_columns.waiting_since(state) == {
        "waiting_since": datetime.fromtimestamp(0.0, UTC)  # NaN reads as 1970, the earliest
    }
    far = run_columns.waiting_since({"parked": {"c-far": 1e20}, "letters": {}})["waiting_since"]
    assert far.year == 2999
