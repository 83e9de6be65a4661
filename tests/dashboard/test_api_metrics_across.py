"""GET /api/metrics: the figures the metrics page plots, as JSON, for the same filters."""

from __future__ import annotations

import io
import json
import uuid

import pytest

from journal_store import projection
from journal_store.transfer import import_journal
from tests.dashboard.test_metrics_page import FIXTURES, imported

pytestmark = pytest.mark.django_db


def test_the_api_sums_the_chosen_runs_in_all_per_period_and_per_team(as_owner):
    imported("repo-fix.v1.jsonl", "solo.v1.jsonl")
    body = as_owner.get("/api/metrics").json()
    assert set(body) == {
        "filters",
        "totals",
        "oldest_open",
        "period",
        "periods",
        "every_period",
        "teams",
        "undated",
    }
    totals = body["totals"]
    assert totals["runs"] == 2
    assert (totals["coord_tokens"], totals["work_tokens"]) == (340, 485 + 520)
    assert totals["coordination_overhead_ratio"] == round(340 / 1005, 4)
    assert [t["team"] for t in body["teams"]] == ["repo-fix", "solo"]
    assert body["teams"][0]["coordination_overhead_ratio"] == 0.701
    # Deadlocks and orphaned commitments across runs: repo-fix waited and took up requests,
    # none deadlocked or left owed; the solo coder neither waited nor was asked (null).
    assert totals["waits"] > 0 and (totals["deadlocks"], totals["deadlock_rate"]) == (0, 0.0)
    assert totals["commitments"] > 0 and totals["commitment_orphan_rate"] == 0.0
    assert body["teams"][1]["deadlock_rate"] is None
    assert body["teams"][1]["commitment_orphan_rate"] is None
    assert body["period"] == "day" and sum(p["runs"] for p in body["periods"]) == 2
    assert body["every_period"] is True
    one = as_owner.get("/api/metrics?team=solo&until=9999-12-31").json()
    assert one["filters"] == {
        "team": "solo",
        "scenario": "",
        "model": "",
        "since": None,
        "until": "9999-12-31",
    }
    assert one["totals"]["runs"] == 1 and [t["team"] for t in one["teams"]] == ["solo"]


def test_the_api_with_no_runs_answers_zeros_and_nulls(as_owner):
    body = as_owner.get("/api/metrics").json()
    assert body["totals"]["runs"] == 0 and body["teams"] == [] and body["periods"] == []
    assert body["totals"]["coordination_overhead_ratio"] is None
    assert body["totals"]["tokens_per_verified_success"] is None
    assert body["totals"]["deadlock_rate"] is None
    assert body["totals"]["commitment_orphan_rate"] is None


def started_at(t: float, run_id: str) -> None:
    """solo.v1.jsonl imported as run `run_id`, every event of it at time `t`."""
    lines = (FIXTURES / "solo.v1.jsonl").read_text().splitlines()
    events = [json.loads(line.replace("r-oldbfd28870", run_id)) for line in lines]
    moved = [json.dumps(event | {"id": uuid.uuid4().hex, "t": t}) for event in events]
    import_journal(io.BytesIO("\n".join(moved).encode()), name=f"{run_id}.jsonl")
    projection.catch_up()


def test_runs_a_thousand_years_apart_list_the_months_they_started_in_not_those_between(
    as_owner,
):
    """An import takes any time from 1970 to the year 3000: two runs that far apart made
    12,360 months, a 14 MB answer and a 5 MB page, most of it months without a run."""
    started_at(1.0, "r-first")
    started_at(32_503_000_000.0, "r-last")  # in 2999
    body = as_owner.get("/api/metrics").json()
    assert [(p["start"], p["runs"]) for p in body["periods"]] == [
        ("1970-01-01", 1),
        ("2999-12-01", 1),
    ]
    assert body["period"] == "month" and body["every_period"] is False
    page = as_owner.get("/metrics")
    assert page.status_code == 200 and len(page.content) < 200_000
    said = "These runs started more than 120 months apart: only the months runs started in"
    assert said in page.content.decode()


def test_runs_ten_years_apart_list_every_month_between(as_owner):
    started_at(1_600_000_000.0, "r-first")  # 2020-09-13
    started_at(1_900_000_000.0, "r-last")  # 2030-03-17
    body = as_owner.get("/api/metrics").json()
    assert body["every_period"] is True and len(body["periods"]) == 115
    assert sum(p["runs"] for p in body["periods"]) == 2
    assert "periods-left-out" not in as_owner.get("/metrics").content.decode()
