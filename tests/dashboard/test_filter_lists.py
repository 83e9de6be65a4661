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


def test_the_team_box_offers_each_stored_team_once_by_a_seek_per_team(alias):
    """The runs list's Team box: the teams of stored runs, each once, a run with no team left
    out, read by seeks in the team index rather than by reading every run's row."""
    from journal_store.models import RunSummary

    runs = RunSummary.objects.using(alias)
    for n, team in enumerate(["repo-fix", "", "theirs", "repo-fix", "theirs", "a-team"]):
        runs.create(run_id=f"r-{n}", team=team, status="done", stage="")
    assert queries.loose_scan("projection_run", "team", "", [], alias) == [
        "a-team",
        "repo-fix",
        "theirs",
    ]
    journal = DjangoJournal(alias)
    if journal.connection.vendor != "sqlite":
        return  # as above: the plan of a near-empty table says nothing on PostgreSQL
    with journal.connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN QUERY PLAN SELECT MIN(team) FROM projection_run WHERE team > %s", ["a"]
        )
        plan = " ".join(str(part) for row in cursor.fetchall() for part in row)
    assert "USING COVERING INDEX" in plan and "team" in plan, plan
