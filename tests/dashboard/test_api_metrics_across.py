"""GET /api/metrics: the figures the metrics page plots, as JSON, for the same filters."""

from __future__ import annotations

import pytest

from tests.dashboard.test_metrics_page import imported

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_api_sums_the_chosen_runs_in_all_per_period_and_per_team(as_owner):
    imported("repo-fix.v1.jsonl", "solo.v1.jsonl")
    body = as_owner.get("/api/metrics").json()
    assert set(body) == {"filters", "totals", "oldest_open", "period", "periods", "teams"}
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
