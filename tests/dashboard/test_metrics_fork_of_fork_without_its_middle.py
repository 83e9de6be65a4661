"""A fork of a fork imported with the run at the top of its chain but not the fork between
them counts the top run's past once across runs.

The fork of the fork's journal copies the first fork's RunForked, so it says where the first
fork began in the top run and what that prefix held: the read model keeps it (`lineage`), and
the add-back for the missing middle run is its own part only, where it was the whole prefix the
fork of the fork copied, the top run's part counted a second time beside the top run's share.
"""

from __future__ import annotations

import io
import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunState, RunSummary, StoredEvent
from journal_store.transfer import export, import_journal
from runtime.metric_sums import SUMMED
from services import forks
from services.metrics import MetricsFilter, across
from tests.dashboard.conftest import drive, run_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def verdicts(run_id: str) -> list[int]:
    return [
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if r.event.kind == "MessageSent" and r.event.performative.lower() in ("accept", "reject")
    ]


def after_its_fork_point(run_id: str) -> int:
    """The position of the fork's first message after its RunForked (its own, not copied)."""
    records = list(DjangoJournal().read(f"run-{run_id}"))
    forked = next(i for i, r in enumerate(records) if r.event.kind == "RunForked")
    return next(r.position for r in records[forked:] if r.event.kind == "MessageSent")


def exported(run_id: str) -> bytes:
    out = io.StringIO()
    export(run_id, out)
    return out.getvalue().encode()


def figures(row: RunSummary) -> dict[str, int]:
    return {
        "tokens": row.tokens,
        "coord_tokens": row.coord_tokens,
        "work_tokens": row.work_tokens,
        **{name: getattr(row, name) for name in SUMMED if name != "conflict_wait"},
    }


def copied(row: RunSummary) -> dict[str, int]:
    return {
        "tokens": row.inherited_tokens,
        "coord_tokens": row.inherited_coord_tokens,
        "work_tokens": row.inherited_work_tokens,
        **{name: row.copied_figures.get(name, 0) for name in SUMMED if name != "conflict_wait"},
    }


@pytest.fixture
def chain(owner) -> dict[str, object]:
    """P, F1 forked from P at its first verdict, F2 forked from F1 at F1's own first message;
    every run's read-model row as the full store has it, and the three journals."""
    p = run_of("first-flight")
    f1 = forks.fork_run(p, verdicts(p)[0], forks.Changes(), "owner")
    assert drive(f1) != "stepped"
    f2 = forks.fork_run(f1, after_its_fork_point(f1), forks.Changes(), "owner")
    assert drive(f2) != "stepped"
    projection.catch_up()
    rows = {r.run_id: r for r in RunSummary.objects.all()}
    full = across(MetricsFilter()).totals
    journals = {run_id: exported(run_id) for run_id in (p, f1, f2)}
    return {"ids": (p, f1, f2), "rows": rows, "full": full, "journals": journals}


def only(chain, *run_ids: str) -> None:
    """The store emptied, then these runs' journals imported into it."""
    StoredEvent.objects.all().delete()
    projection.rebuild()
    for run_id in run_ids:
        import_journal(io.BytesIO(chain["journals"][run_id]))
    projection.catch_up()


def test_the_top_run_and_the_fork_of_the_fork_count_the_top_runs_past_once(chain):
    p, f1, f2 = chain["ids"]
    rows = chain["rows"]
    assert rows[f2].parent_id == f1 and rows[f1].parent_id == p
    only(chain, p, f2)
    assert set(RunSummary.objects.values_list("run_id", flat=True)) == {p, f2}
    # What the two journals hold between them: all of P, F1's own part up to F2's fork point,
    # and F2's own part; F1's copy of P lies within P.
    held = {
        name: figures(rows[p])[name]
        + copied(rows[f2])[name]
        - copied(rows[f1])[name]
        + figures(rows[f2])[name]
        - copied(rows[f2])[name]
        for name in figures(rows[p])
    }
    assert copied(rows[f1])["tokens"] > 0 and copied(rows[f1])["handoffs"] > 0
    totals = across(MetricsFilter()).totals
    assert {name: totals[name] for name in held} == held
    assert totals["cost"] == pytest.approx(rows[p].cost + rows[f2].cost - rows[f1].inherited_cost)
    # The middle run imported too: the figures are the full store's.
    import_journal(io.BytesIO(chain["journals"][f1]))
    projection.catch_up()
    again = across(MetricsFilter()).totals
    assert {name: again[name] for name in held} == {name: chain["full"][name] for name in held}


def test_the_fork_of_the_fork_alone_counts_its_whole_journal(chain):
    f2 = chain["ids"][2]
    only(chain, f2)
    totals = across(MetricsFilter()).totals
    assert {name: totals[name] for name in figures(chain["rows"][f2])} == figures(chain["rows"][f2])


def test_migration_0022_fills_in_the_chains_of_forks_projected_before_it(chain):
    p, f1, f2 = chain["ids"]
    row = RunSummary.objects.get(run_id=f2)
    assert [(fork["run"], fork["parent"]) for fork in row.lineage] == [(f1, p)]
    assert row.lineage[0]["tokens"] == chain["rows"][f1].inherited_tokens
    assert row.lineage_cost == {f1: pytest.approx(chain["rows"][f1].inherited_cost)}
    assert RunSummary.objects.get(run_id=f1).lineage == []
    made = row.lineage, row.lineage_cost
    executor = MigrationExecutor(connection)
    executor.migrate([("journal_store", "0021_fork_copied_figures")])
    try:
        # As a store before 0022 held it: states without the forks the folds now keep.
        for stored in RunState.objects.filter(run_id=f2, fold__in=("bill", "metrics")):
            state = json.loads(stored.state)
            del state["forks"]
            RunState.objects.filter(pk=stored.pk).update(state=json.dumps(state))
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    row = RunSummary.objects.get(run_id=f2)
    assert (row.lineage, row.lineage_cost) == made
    # A rebuild gives the same: the folds keep the forks, from the events.
    projection.rebuild(["runs"])
    row = RunSummary.objects.get(run_id=f2)
    assert (row.lineage, row.lineage_cost) == made
