"""Migration 0025 corrects the runs projected before it: each run's livelock whole (the tasks
looked at), a compensated run's verified flag, what a fork's copied prefix held of the new
whole, and the rollup anew; as a rebuild makes them."""

from __future__ import annotations

import importlib
import json
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from journal_store import metrics_days, projection
from journal_store.journal import DjangoJournal
from journal_store.models import MetricsDay, RunState, RunSummary
from runtime.jsonl import JsonlJournal
from services import forks
from tests.dashboard.conftest import drive, run_of
from tests.journal_store.test_projection_matches_views import store

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
MIGRATION = importlib.import_module("journal_store.migrations.0025_livelock_whole_and_compensated")
FIELDS = (*metrics_days.KEY, *metrics_days.SUMS)
COLUMNS = ("run_id", "looked_at_tasks", "verified", "copied_figures", "lineage")


def as_before(state: dict) -> dict:
    """A metrics state as the fold left it before 0025: no saga flag, no whole in its copies."""
    state.pop("undone", None)
    for copied in [state.get("copied") or {}, *(f["copied"] for f in state.get("forks", []))]:
        copied.pop("looked_at_tasks", None)
    return state


def test_the_migration_corrects_the_runs_projected_before_it(owner, fly_team):
    for team, scenario in (("support-desk", "flip-flop"), ("support-triage", "refund-saga")):
        store("default", JsonlJournal(fly_team(scenario, team=team).path).read_all())
    parent = run_of("first-flight")
    verdict = next(
        r.position
        for r in DjangoJournal().read(f"run-{parent}")
        if r.event.kind == "MessageSent" and r.event.performative.lower() in ("accept", "reject")
    )
    child = forks.fork_run(parent, verdict, forks.Changes(), "owner")
    assert drive(child) != "stepped"
    projection.catch_up()
    projected = list(RunSummary.objects.order_by("run_id").values(*COLUMNS))
    rolled = sorted(MetricsDay.objects.values_list(*FIELDS))
    assert RunSummary.objects.get(run_id=child).copied_figures["looked_at_tasks"] == 1
    assert sum(r["looked_at_tasks"] for r in projected) > 0

    # As the tables stood before it: a compensated run verified, no whole, copies without it.
    for stored in RunState.objects.filter(fold="metrics"):
        state = as_before(json.loads(stored.state))
        RunState.objects.filter(pk=stored.pk).update(state=json.dumps(state))
    RunSummary.objects.update(looked_at_tasks=0)
    RunSummary.objects.filter(status="compensated").update(verified=True)
    for run in RunSummary.objects.exclude(parent_id=""):
        run.copied_figures.pop("looked_at_tasks", None)
        run.save(update_fields=["copied_figures"])
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) != rolled

    MIGRATION.fill(apps, SimpleNamespace(connection=connection))
    assert list(RunSummary.objects.order_by("run_id").values(*COLUMNS)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
    projection.rebuild()
    assert list(RunSummary.objects.order_by("run_id").values(*COLUMNS)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
