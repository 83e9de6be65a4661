"""Migration 0048 gives a run the summaries' fold set aside at its first event before the
projector wrote such a run a summary (projection.Runs.set_aside) the summary a rebuild would:
it had none until the next rebuild_projections, so the runs list never had it. A run set
aside later in its journal, and every other run, is left as it stands; run again, it writes
nothing."""

from __future__ import annotations

import importlib
import uuid
from datetime import UTC, date, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.forms.models import model_to_dict

from journal_store import projection
from journal_store.models import MetricsDay, RunSummary, StoppedView
from tests.dashboard.test_a_run_stopped_at_its_first_event import unfolded_run
from tests.dashboard.test_a_set_aside_run_is_not_swept_by_its_summary import run

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("journal_store", "0047_limit_not_enforced_findings")]
SUMMARIZE = importlib.import_module(
    "journal_store.migrations.0048_summaries_of_runs_set_aside_at_their_first_event"
)


def read_models() -> tuple[dict, list]:
    summaries = {
        s.run_id: {k: v for k, v in model_to_dict(s).items() if k != "id"}
        for s in RunSummary.objects.all()
    }
    days = sorted(
        tuple(v for k, v in model_to_dict(d).items() if k != "id") for d in MetricsDay.objects.all()
    )
    return summaries, days


def stored_before_the_change(monkeypatch) -> tuple[dict, list]:
    """Run c set aside at its first event, run "later" at a later one, run "plain" folded: the
    read models a rebuild writes now, then as the projector wrote them before it (a run set
    aside at its first event had no summary)."""
    unfolded_run()
    run("later", set_aside=True)
    run("plain")
    projection.rebuild()
    rebuilt = read_models()
    assert rebuilt[0]["c"]["status"] == "unknown"
    assert {s.run_id for s in StoppedView.objects.all()} == {"c", "later"}
    with monkeypatch.context() as patched:
        patched.setattr(projection.Runs, "set_aside", lambda self, row, using: None)
        projection.rebuild()
    assert "c" not in read_models()[0] and "later" in read_models()[0]
    return rebuilt


def test_0048_writes_the_summary_a_rebuild_would(monkeypatch):
    rebuilt = stored_before_the_change(monkeypatch)
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert read_models() == rebuilt


def test_0048_run_again_writes_nothing(monkeypatch):
    rebuilt = stored_before_the_change(monkeypatch)
    editor = SimpleNamespace(connection=connection)
    SUMMARIZE.summarize(apps, editor)
    assert read_models() == rebuilt
    SUMMARIZE.summarize(apps, editor)
    assert read_models() == rebuilt


AT = 1_745_000_000.0  # 2025-04-18 18:13:20 UTC: the first event's time of run "c"
KEY = ("team", "scenario", "model", "day")
THEN = [("journal_store", "0048_summaries_of_runs_set_aside_at_their_first_event")]


def back_to(target: list) -> Any:
    """The store migrated to `target`, and its historical models there."""
    executor = MigrationExecutor(connection)
    executor.migrate(target)
    executor.loader.build_graph()
    return executor.loader.project_state(target).apps


@pytest.fixture
def leaf_after():
    """The store at every migration again after the test, however it ended."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def event(models: Any, run_id: str, version: int, t: float) -> int:
    made = models.get_model("journal_store", "StoredEvent").objects.create(
        event_id=uuid.uuid4(),
        stream=f"run-{run_id}",
        version=version,
        run_id=run_id,
        kind="TeamStarted",
        v=1,
        data="{}",
        t=t,
        recorded_at=datetime.fromtimestamp(t, UTC),
    )
    return made.position


def test_0048_on_rows_as_0047_had_them_with_only_its_models(monkeypatch, leaf_after):
    """Rows written through 0047's models: run "c" set aside at its first event gets its
    summary and its share of the rollup; "timeless" (no time) is on the rollup's no-day; "had"
    keeps its summary; "gone" (its row deleted) gets none. Today's projector would write a
    column 0047 lacks (a later migration's, made up here): 0048 must not use it."""
    old = back_to(BEFORE)
    aside = old.get_model("journal_store", "StoppedView").objects
    summaries = old.get_model("journal_store", "RunSummary").objects
    rollup = old.get_model("journal_store", "MetricsDay").objects
    for run_id, t in (("c", AT), ("timeless", 0.0), ("had", AT), ("gone", AT)):
        aside.create(projector="runs", run_id=run_id, position=event(old, run_id, 1, t), kind="x")
    aside.create(projector="search", run_id="other", position=event(old, "other", 1, AT), kind="x")
    summaries.create(run_id="had", status="done", stage="done")
    old.get_model("journal_store", "StoredEvent").objects.filter(run_id="gone").delete()
    rollup.create(team="", scenario="", model="", day=date(2025, 4, 18), runs=2, priced=1, tokens=7)
    columns = {f.name for f in summaries.model._meta.get_fields()} - {"run_id"}
    assert set(SUMMARIZE.FIRST_SUMMARY) == columns  # the frozen copy is 0047's whole row
    monkeypatch.setattr(projection, "FIRST_SUMMARY", {**projection.FIRST_SUMMARY, "later": 0})

    new = back_to(THEN)

    made = {s["run_id"]: s for s in new.get_model("journal_store", "RunSummary").objects.values()}
    assert set(made) == {"c", "timeless", "had"}
    assert made["had"]["status"] == "done"
    start = datetime.fromtimestamp(AT, UTC)
    known = {"status": "unknown", "stage": "", "started_at": start, "started_on": start.date()}
    assert made["c"] == {"run_id": "c", **SUMMARIZE.FIRST_SUMMARY, **known}
    assert made["timeless"]["started_at"] is None and made["timeless"]["started_on"] is None
    days = {d["day"]: d for d in new.get_model("journal_store", "MetricsDay").objects.values()}
    assert set(days) == {date(2025, 4, 18), date(1, 1, 1)}
    assert (days[date(2025, 4, 18)]["runs"], days[date(2025, 4, 18)]["priced"]) == (3, 2)
    assert days[date(2025, 4, 18)]["tokens"] == 7
    assert (days[date(1, 1, 1)]["runs"], days[date(1, 1, 1)]["priced"]) == (1, 1)
    sums = {k: v for k, v in days[date(1, 1, 1)].items() if k not in ("id", *KEY)}
    assert sums == dict.fromkeys(sums, 0) | {"runs": 1, "priced": 1}
