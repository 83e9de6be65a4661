"""Money on the pages and the API: the price table applied to stored runs, per agent, task and
verified success, the list sorted by cost (unknown costs last), the totals balanced with the
bill."""

from __future__ import annotations

import io
import json

import pytest

from journal_store import projection
from journal_store.models import RunSummary
from journal_store.transfer import import_journal
from runtime import prices
from tests.startup import refused

pytestmark = pytest.mark.django_db

TABLE = prices.parse({"currency": "USD", "models": {"m-big": {"input": 2.0, "output": 8.0}}})


def imported(run_id: str, model_name: str, status: str, prompt: int, completion: int) -> str:
    r = {"run_id": run_id}
    config = {"model": "endpoint", "model_name": model_name}
    lines = [
        {
            "kind": "TeamStarted",
            **r,
            "team": "repo-fix",
            "scenario": "s",
            "task": "t",
            "config": config,
        },
        {
            "kind": "ModelResponded",
            "v": 2,
            **r,
            "agent": "coder",
            "task_id": "T1",
            "text": "",
            "tool_calls": [],
            "usage": {"total": prompt + completion, "prompt": prompt, "completion": completion},
        },
        {"kind": "TeamFinished", **r, "status": status, "reason": "r"},
    ]
    import_journal(io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode()))
    projection.catch_up()
    return run_id


def test_costs_in_the_bill_the_run_and_the_list(settings, as_owner):
    settings.PRICES = TABLE
    cheap = imported("r-cheap", "m-big", "done", 1_000, 100)  # 0.0028
    dear = imported("r-dear", "m-big", "failed", 100_000, 10_000)  # 0.28
    unknown = imported("r-unknown", "m-unpriced", "done", 10, 10)
    bill = as_owner.get(f"/api/runs/{cheap}/bill").json()
    assert bill["total"]["prompt"] == 1_000 and bill["agents"]["coder"]["model"] == "m-big"
    assert bill["money"]["total"] == pytest.approx(0.0028)
    assert bill["money"]["per_verified_success"] == pytest.approx(0.0028)
    assert bill["money"]["tasks"] == {"T1": pytest.approx(0.0028)}
    failed = as_owner.get(f"/api/runs/{dear}/bill").json()["money"]
    assert failed["total"] == pytest.approx(0.28) and failed["per_verified_success"] is None
    assert as_owner.get(f"/api/runs/{unknown}/bill").json()["money"]["agents"]["coder"] == {
        "cost": None,
        "why": "no price for m-unpriced",
        "estimate": None,
    }
    assert RunSummary.objects.get(run_id=dear).cost == pytest.approx(0.28)
    listed = as_owner.get("/api/runs?sort=cost").json()["items"]
    assert [r["run_id"] for r in listed] == [dear, cheap, unknown]
    assert listed[0]["cost"] == pytest.approx(0.28) and listed[2]["cost"] is None
    page = as_owner.get(f"/runs/{cheap}/?tab=bill").content.decode()
    assert "0.0028 USD" in page and "m-big" in page


def test_a_bad_price_file_stops_the_server_naming_it(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text('{"models": {"m": {"input": "cheap", "output": 1}}}')
    said = refused(MINUTES_PRICES=str(path))
    assert f"MINUTES_PRICES: {path}: models.m needs numbers" in said
