"""Migration 0048 gives a run the summaries' fold set aside at its first event before the
projector wrote such a run a summary (projection.Runs.set_aside) the summary a rebuild would:
it had none until the next rebuild_projections, so the runs list never had it. A run set
aside later in its journal, and every other run, is left as it stands; run again, it writes
nothing."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

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
