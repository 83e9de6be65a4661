"""The timeline's filter lists (kinds and agents a run holds), on every database backend."""

from __future__ import annotations

import pytest

from dashboard import queries
from journal_store.journal import DjangoJournal
from runtime.events import BudgetDebited, ModelCalled, RunStarted
from tests.journal_store.conftest import on_every_backend

pytestmark = on_every_backend()


def test_each_kind_and_agent_of_a_run_is_offered_once_and_no_other_runs(alias):
    journal = DjangoJournal(alias)
    run = [
        RunStarted(run_id="r-a", agent="coder", task="t"),
        ModelCalled(run_id="r-a", agent="coder", turn=1),
        BudgetDebited(run_id="r-a", agent="reviewer", amount=3),
        ModelCalled(run_id="r-a", agent="reviewer", turn=1),
        BudgetDebited(run_id="r-a", amount=1),  # no agent: not offered
    ]
    journal.append("run-r-a", run, 0)
    journal.append("run-r-b", [RunStarted(run_id="r-b", agent="tester", task="t")], 0)
    assert queries.distinct("r-a", "kind", alias) == ["BudgetDebited", "ModelCalled", "RunStarted"]
    assert queries.distinct("r-a", "agent", alias) == ["coder", "reviewer"]
    assert queries.distinct("r-none", "kind", alias) == []


def test_each_step_of_the_scan_is_a_seek_in_the_runs_index(alias):
    """What makes the lists cost the number of values, not the run's length. (PostgreSQL's
    planner chooses by the table's statistics, which a test's near-empty table does not have:
    its plan here says nothing about a real one, so SQLite's is the one asserted.)"""
    journal = DjangoJournal(alias)
    if journal.connection.vendor != "sqlite":
        pytest.skip("PostgreSQL plans by statistics an empty test table lacks")
    for column, index in (("kind", "journal_run_kind"), ("agent", "journal_run_agent")):
        with journal.connection.cursor() as cursor:
            cursor.execute(
                f"EXPLAIN QUERY PLAN SELECT MIN({column}) FROM journal_event"
                f" WHERE run_id = %s AND {column} > %s",
                ["r-a", "a"],
            )
            plan = " ".join(str(part) for row in cursor.fetchall() for part in row)
        assert index in plan, plan
