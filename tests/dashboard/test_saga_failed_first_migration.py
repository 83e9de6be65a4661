"""Migration 0028 lists as undone (compensated) the runs projected before it whose saga failed
at its first step (they were listed done and counted verified), and leaves the others alone:
status, verified and the rollup, as a rebuild makes them."""

from __future__ import annotations

import importlib
import json
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from journal_store import metrics_days, projection
from journal_store.models import MetricsDay, RunState, RunSummary
from runtime.journal import Recorded
from runtime.status import COMPENSATED
from tests.journal_store.test_projection_matches_views import store
from tests.runtime.test_metrics_whole_and_verdict import refund

pytestmark = pytest.mark.django_db(transaction=True)
MIGRATION = importlib.import_module("journal_store.migrations.0028_a_saga_failed_at_its_first_step")
FIELDS = (*metrics_days.KEY, *metrics_days.SUMS)
COLUMNS = ("run_id", "status", "verified")


def test_the_migration_lists_a_saga_failed_at_its_first_step_as_undone():
    runs = {"first": refund([], failed="label"), "through": refund([]), "undid": refund(["l"])}
    for run_id, events in runs.items():
        mine = [e.model_copy(update={"run_id": run_id}) for e in events]
        store("default", [Recorded(f"run-{run_id}", i, i, e) for i, e in enumerate(mine, 1)])
    projection.catch_up()
    projected = list(RunSummary.objects.order_by("run_id").values(*COLUMNS))
    rolled = sorted(MetricsDay.objects.values_list(*FIELDS))
    assert [(r["run_id"], r["status"]) for r in projected] == [
        ("first", COMPENSATED),
        ("through", "done"),
        ("undid", COMPENSATED),
    ]

    # As the folds left the first run before it: done, verified, no saga undone.
    for stored in RunState.objects.filter(run_id="first", fold__in=("summary", "metrics")):
        state = json.loads(stored.state) | {"undone": False}
        RunState.objects.filter(pk=stored.pk).update(state=json.dumps(state))
    RunSummary.objects.filter(run_id="first").update(status="done", verified=True)
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) != rolled

    MIGRATION.fill(apps, SimpleNamespace(connection=connection))
    assert list(RunSummary.objects.order_by("run_id").values(*COLUMNS)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
    projection.rebuild()
    assert list(RunSummary.objects.order_by("run_id").values(*COLUMNS)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
