"""Migration 0011 fills the metric columns of runs stored before it from their stored fold
states, and the metrics page's rollup from them: right for old runs at once, as a rebuild
would make it."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from journal_store import metrics_days, projection
from journal_store.models import MetricsDay, RunSummary
from journal_store.transfer import import_journal
from tests.journal_store.test_projection_matches_views import METRIC_COLUMNS

pytestmark = pytest.mark.django_db(transaction=True)
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"
FIELDS = (*metrics_days.KEY, *metrics_days.SUMS)
MIGRATION = importlib.import_module("journal_store.migrations.0011_run_metrics")


def test_the_migration_fills_the_metric_columns_of_runs_stored_before_it():
    for name in ("repo-fix.v1.jsonl", "solo.v1.jsonl"):
        with (FIXTURES / name).open("rb") as source:
            import_journal(source, name=name)
    projection.catch_up()
    projected = list(RunSummary.objects.order_by("run_id").values(*METRIC_COLUMNS))
    assert any(row["coord_tokens"] for row in projected)
    # As the table stood when the columns were added: every run at the columns' defaults.
    defaults = {
        f.name: f.get_default() for f in RunSummary._meta.fields if f.name in METRIC_COLUMNS
    }
    RunSummary.objects.update(**defaults)
    assert list(RunSummary.objects.order_by("run_id").values(*METRIC_COLUMNS)) != projected
    rolled = sorted(MetricsDay.objects.values_list(*FIELDS))
    assert rolled and [row[4] for row in rolled] == [1, 1]  # a group per run here
    MetricsDay.objects.all().delete()
    MIGRATION.fill(apps, SimpleNamespace(connection=connection))
    assert list(RunSummary.objects.order_by("run_id").values(*METRIC_COLUMNS)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
    projection.rebuild()
    assert list(RunSummary.objects.order_by("run_id").values(*METRIC_COLUMNS)) == projected
