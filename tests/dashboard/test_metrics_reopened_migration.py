"""Migration 0027 sets again the livelock figures of the runs projected before it, where a
reviewed task the livelock signal found reopened was counted twice (as the task and as its
signal): each run's part and whole, and the rollup; as a rebuild makes them."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from journal_store import metrics_days, projection
from journal_store.models import MetricsDay, RunSummary
from tests.journal_store.test_projection_matches_views import store
from tests.runtime.test_metrics import recorded
from tests.runtime.test_metrics_whole_and_verdict import reopened

pytestmark = pytest.mark.django_db(transaction=True)
MIGRATION = importlib.import_module("journal_store.migrations.0027_a_reopened_task_counted_once")
FIELDS = (*metrics_days.KEY, *metrics_days.SUMS)
COLUMNS = ("run_id", "livelocked_tasks", "looked_at_tasks", "reviewed_tasks")


def test_the_migration_counts_a_reopened_task_once():
    events = [e.model_copy(update={"run_id": "r-m"}) for e in reopened(escalated_too=True)]
    store("default", recorded(events))
    projection.catch_up()
    projected = list(RunSummary.objects.order_by("run_id").values(*COLUMNS))
    rolled = sorted(MetricsDay.objects.values_list(*FIELDS))
    assert [(r["livelocked_tasks"], r["looked_at_tasks"]) for r in projected] == [(1, 2)]

    # As the fold's result had them before: T1 twice in the part and in the whole.
    RunSummary.objects.update(livelocked_tasks=2, looked_at_tasks=3)
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) != rolled

    MIGRATION.fill(apps, SimpleNamespace(connection=connection))
    assert list(RunSummary.objects.order_by("run_id").values(*COLUMNS)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
    projection.rebuild()
    assert list(RunSummary.objects.order_by("run_id").values(*COLUMNS)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
