"""A fork's copied prefix counts once in every figure the metrics rollup sums, not only in its
tokens: its claims, hand-offs, deliveries, checks, files written... were counted under the
parent and again under each fork, so rates across runs leaned toward what happened before fork
points. The metrics fold keeps what the prefix held of each at RunForked, the fork's summary
keeps it (`copied_figures`), the rollup takes it off the fork's share, and migration 0021
fills it in for forks projected before it."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from journal_store import metrics_days, projection
from journal_store.journal import DjangoJournal
from journal_store.models import MetricsDay, RunState, RunSummary
from runtime import flight
from runtime.metric_sums import SUMMED, summed
from runtime.metrics import metrics
from services import forks
from tests.dashboard.conftest import drive, run_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = [("journal_store", "0020_run_waiting_for")]


def parents_figures_upto(run_id: str, at: int) -> dict:
    """The parent's SUMMED figures over its events up to and including position `at`."""
    records = [r for r in flight.run_records(DjangoJournal(), run_id) if r.position <= at]
    return summed(metrics(records))


def first_verdict(run_id: str) -> int:
    """The reviewer's first verdict: hand-offs, deliveries, files written and a check before
    it, so the copied prefix holds some of most figures."""
    return next(
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if r.event.kind == "MessageSent" and r.event.performative.lower() in ("accept", "reject")
    )


@pytest.fixture
def forked(owner) -> tuple[str, str, dict]:
    parent = run_of("first-flight")
    at = first_verdict(parent)
    child = forks.fork_run(parent, at, forks.Changes(), "owner")
    assert drive(child) != "stepped"
    projection.catch_up()
    return parent, child, parents_figures_upto(parent, at)


def rollup() -> dict[str, int]:
    return {name: sum(MetricsDay.objects.values_list(name, flat=True)) for name in SUMMED}


def expected(parent: str, child: str) -> dict[str, int]:
    """Each figure as the rollup should sum it: the parent's whole, the fork's own."""
    p, c = (
        metrics_days.share(RunSummary.objects.values(*metrics_days.COLUMNS).get(run_id=r))
        for r in (parent, child)
    )
    return {name: p[name] + c[name] for name in SUMMED}


def test_a_forks_copied_figures_are_its_parents_and_are_summed_across_runs_once(forked):
    parent, child, copied = forked
    c = RunSummary.objects.get(run_id=child)
    assert c.copied_figures == copied
    assert RunSummary.objects.get(run_id=parent).copied_figures == {}
    held = {name for name, value in copied.items() if value}
    assert {"handoffs", "deliveries", "files_written", "verifications"} <= held
    whole = {
        name: sum(RunSummary.objects.values_list(name, flat=True))
        for name in ("handoffs", "deliveries", "files_written", "verifications", "claims")
    }
    sums = rollup()
    for name, both in whole.items():
        assert sums[name] == both - copied[name], name
    assert sums == expected(parent, child)
    # A rebuild gives the same: the snapshot is taken by the fold, from the events.
    projection.rebuild(["runs"])
    assert RunSummary.objects.get(run_id=child).copied_figures == copied
    assert rollup() == sums


def test_migration_0021_fills_in_the_forks_projected_before_it(forked):
    _, child, copied = forked
    sums = rollup()
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        # As a store before 0021 held it: a metrics state without the snapshot.
        stored = RunState.objects.get(run_id=child, fold="metrics")
        state = json.loads(stored.state)
        del state["copied"]
        RunState.objects.filter(pk=stored.pk).update(state=json.dumps(state))
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())  # 0021 and any after it
    assert RunSummary.objects.get(run_id=child).copied_figures == copied
    assert rollup() == sums
    state = json.loads(RunState.objects.get(run_id=child, fold="metrics").state)
    assert state["copied"] == copied
