"""The runs list and GET /api/runs filter by a finding's kind: the runs with at least one
finding of that kind, listed once however many they have. Which runs stopped for want of a tool
call, or ran out of budget, was a click into every run's Findings tab."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import BudgetExhausted, RunInconclusive, TeamStarted

pytestmark = pytest.mark.django_db


def stored(run_id: str, *stops) -> None:
    started = TeamStarted(run_id=run_id, team="solo", scenario="solo-fix", task=f"task of {run_id}")
    DjangoJournal().append(f"run-{run_id}", [started, *stops], 0)


@pytest.fixture
def three(db) -> None:
    quiet = {"run_id": "r-000000000001", "agent": "coder"}
    stored(
        "r-000000000001",
        RunInconclusive(**quiet, task_id="T1", reason="two replies in a row without a tool call"),
        RunInconclusive(**quiet, task_id="T2", reason="two replies in a row without a tool call"),
    )
    broke = {"run_id": "r-000000000002", "agent": "coder", "task_id": "T1"}
    stored("r-000000000002", BudgetExhausted(**broke, spent=210, allowance=180))
    stored("r-000000000003")
    projection.catch_up()


def test_the_list_shows_the_runs_with_a_finding_of_the_kind_chosen(as_owner, three):
    page = as_owner.get("/?finding=no_tool_call").content.decode()
    assert page.count("r-000000000001") >= 1
    assert "r-000000000002" not in page and "r-000000000003" not in page
    assert '<option value="no_tool_call" selected>no tool call</option>' in page
    page = as_owner.get("/?finding=budget_exhausted").content.decode()
    assert "r-000000000002" in page and "r-000000000001" not in page
    page = as_owner.get("/?finding=deadlock").content.decode()
    assert "r-00000000000" not in page


def test_the_api_lists_each_run_once_by_a_finding(api, three):
    listed = api.get("/api/runs?finding=no_tool_call").json()
    assert [r["run_id"] for r in listed["items"]] == ["r-000000000001"]  # two findings, once
    assert listed["next"] is None  # no page after it
    refused = api.get("/api/runs?finding=budget")
    assert refused.status_code == 422
    assert "'budget' is no finding" in str(refused.json())
