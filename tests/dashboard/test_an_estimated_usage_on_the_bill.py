"""A run's bill on its page and in the API marks the calls whose usage Minutes estimated, and
gives no cost as fact for them: "not known", with what the estimate comes to beside it. The
review imported `case.py usage_total_tiny`'s journal and read a cost of 0.0 for a call whose
vendor reported a total of 1 token, and its bill said nothing of an estimate."""

from __future__ import annotations

import io
import json

import pytest

from journal_store import projection
from journal_store.models import BillLine, RunSummary
from journal_store.transfer import import_journal
from runtime import prices

pytestmark = pytest.mark.django_db

TABLE = prices.parse({"currency": "USD", "models": {"m": {"input": 3.0, "output": 15.0}}})
GUESSED = {"total": 426, "prompt": 407, "completion": 19, "estimated": "implausible"}
REPORTED = {"total": 1_100, "prompt": 1_000, "completion": 100}


def imported(run_id: str, *usages: dict) -> str:
    r = {"run_id": run_id}
    config = {"model": "endpoint", "model_name": "m"}
    lines: list[dict] = [
        {"kind": "TeamStarted", **r, "team": "solo", "scenario": "s", "task": "t", "config": config}
    ]
    for agent, usage in usages:
        lines.append(
            {
                "kind": "ModelResponded",
                "v": 3,
                **r,
                "agent": agent,
                "task_id": "T1",
                "text": "",
                "tool_calls": [],
                "usage": usage,
            }
        )
    lines.append({"kind": "TeamFinished", **r, "status": "done", "reason": "r"})
    import_journal(io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode()))
    projection.catch_up()
    return run_id


def test_the_bill_marks_an_estimate_and_prices_it_apart(settings, as_owner):
    settings.PRICES = TABLE
    run_id = imported("r-guess", ("coder", REPORTED), ("reviewer", GUESSED))

    bill = as_owner.get(f"/api/runs/{run_id}/bill").json()
    assert (
        bill["agents"]["reviewer"]["estimated"] == 1 and bill["agents"]["coder"]["estimated"] == 0
    )
    assert bill["total"]["estimated"] == 1
    assert [line["estimated"] for line in bill["lines"]] == [0, 1]
    money = bill["money"]
    reviewer = money["agents"]["reviewer"]
    assert reviewer["cost"] is None and "estimated, not reported by the vendor" in reviewer["why"]
    assert reviewer["estimate"] == pytest.approx((407 * 3.0 + 19 * 15.0) / 1e6)
    assert money["agents"]["coder"]["cost"] == pytest.approx((1_000 * 3.0 + 100 * 15.0) / 1e6)
    assert money["total"] is None and money["per_verified_success"] is None
    assert money["estimate"] == pytest.approx((1_407 * 3.0 + 119 * 15.0) / 1e6)
    assert RunSummary.objects.get(run_id=run_id).cost is None  # a guess is not the run's cost
    assert BillLine.objects.get(run_id=run_id, agent="reviewer").estimated == 1

    page = as_owner.get(f"/runs/{run_id}/?tab=bill").content.decode()
    assert page.count('class="badge estimated"') == 3  # its agent row, its line, the legend
    assert "≈ 0.0015" in page and "if the estimated usage is right" in page
    assert "0.0045 USD" not in page  # the reported calls' cost is not given as the run's


def test_the_metrics_page_names_an_estimate_as_why_a_run_has_no_known_cost(settings, as_owner):
    """It said only "a model the price table does not name has none", of a run whose model
    the table names and whose usage Minutes estimated."""
    settings.PRICES = TABLE
    imported("r-guess", ("coder", REPORTED), ("reviewer", GUESSED))
    imported("r-known", ("coder", REPORTED))
    body = as_owner.get("/api/metrics").json()["totals"]
    assert (body["runs"], body["priced"]) == (2, 1)
    assert body["cost"] == pytest.approx((1_000 * 3.0 + 100 * 15.0) / 1e6)
    page = as_owner.get("/metrics").content.decode()
    assert "1 of 2 runs have a known cost" in page
    assert "usage Minutes estimated" in page
