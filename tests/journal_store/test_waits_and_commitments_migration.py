"""Migration 0012 fills the waits, deadlocks, commitments and orphaned commitments of runs stored
before it from their stored metrics states, and the metrics page's rollup anew: the deadlock
and orphaned-commitment rates across runs are right for old runs at once, as a rebuild makes
them."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from journal_store import metrics_days, projection
from journal_store.models import MetricsDay, RunSummary
from tests.coordination import drills
from tests.journal_store.test_projection_matches_views import store

pytestmark = pytest.mark.django_db(transaction=True)
FIELDS = (*metrics_days.KEY, *metrics_days.SUMS)
ADDED = ("waits", "deadlocks", "commitments", "orphaned")
MIGRATION = importlib.import_module("journal_store.migrations.0012_run_waits_and_commitments")


def test_the_migration_fills_waits_and_commitments_of_runs_stored_before_it():
    for drill in ("lease-pair", "forgetful-owner", "asking-pair"):
        store("default", drills.flown(drill).records)
    projection.catch_up()
    projected = list(RunSummary.objects.order_by("run_id").values("run_id", *ADDED))
    assert sum(r["deadlocks"] for r in projected) == 2
    assert sum(r["orphaned"] for r in projected) == 1
    rolled = sorted(MetricsDay.objects.values_list(*FIELDS))
    # As the tables stood before it: the new columns and sums at 0.
    RunSummary.objects.update(**dict.fromkeys(ADDED, 0))
    MetricsDay.objects.update(**dict.fromkeys(ADDED, 0))
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) != rolled
    MIGRATION.fill(apps, SimpleNamespace(connection=connection))
    assert list(RunSummary.objects.order_by("run_id").values("run_id", *ADDED)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
    projection.rebuild()
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
