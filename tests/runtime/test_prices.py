"""Money from tokens: the price table read and refused by entry, the bill's input/output split,
and costs per agent, task, run and verified success that add up."""

from __future__ import annotations

import json

import pytest

from runtime import prices, views
from runtime.events import ModelResponded, TeamStarted, Usage
from runtime.journal import MemoryJournal

TABLE = prices.parse(
    {
        "currency": "EUR",
        "models": {"m-big": {"input": 2.0, "output": 8.0}, "m-flat": {"input": 1, "output": 1}},
    }
)


def bill_of(*responses, config=None):
    journal = MemoryJournal()
    r = {"run_id": "r-1"}
    events = [TeamStarted(**r, team="repo-fix", scenario="s", task="t", config=config or {})]
    for agent, task, usage in responses:
        events.append(
            ModelResponded(**r, agent=agent, task_id=task, text="", tool_calls=[], usage=usage)
        )
    journal.append("run-r-1", events, 0)
    return views.bill(journal.read("run-r-1"))


ENDPOINT = {"model": "endpoint", "model_name": "m-big", "models": {"reviewer": "scripted"}}


def test_the_bill_splits_tokens_and_names_each_agents_model():
    bill = bill_of(
        ("coder", "T1", Usage(total=1_000, prompt=800, completion=200)),
        ("coder", "T2", Usage(total=500, prompt=450, completion=50)),
        ("reviewer", "T1", Usage(total=100, prompt=90, completion=10)),
        config=ENDPOINT,
    )
    coder = bill["agents"]["coder"]
    assert (coder["prompt"], coder["completion"], coder["model"]) == (1_250, 250, "m-big")
    assert bill["agents"]["reviewer"]["model"] == "scripted"
    assert bill["total"] == {
        "tokens": 1_600,
        "calls": 3,
        "prompt": 1_340,
        "completion": 260,
        "estimated": 0,
    }
    money = prices.priced(bill, TABLE, verified=True)
    assert money["agents"]["coder"]["cost"] == pytest.approx((1_250 * 2 + 250 * 8) / 1e6)
    assert money["agents"]["reviewer"] == {
        "cost": 0.0,
        "why": "scripted: no model was paid for",
        "estimate": None,
    }
    assert money["total"] == pytest.approx(money["agents"]["coder"]["cost"])
    assert sum(money["tasks"].values()) == pytest.approx(money["total"])
    assert money["per_verified_success"] == money["total"]
    assert prices.priced(bill, TABLE, verified=False)["per_verified_success"] is None


def test_a_cost_is_never_guessed():
    only_totals = bill_of(("coder", "T1", Usage(total=1_000)), config=ENDPOINT)
    assert only_totals["agents"]["coder"]["prompt"] is None
    money = prices.priced(only_totals, TABLE, verified=True)
    assert money["agents"]["coder"] == {
        "cost": None,
        "why": "some calls reported only a total, not input and output",
        "estimate": None,
    }
    assert money["total"] is None and money["per_verified_success"] is None
    # One price for both: the total is enough.
    flat = bill_of(("coder", "T1", Usage(total=1_000)), config={**ENDPOINT, "model_name": "m-flat"})
    assert prices.priced(flat, TABLE, verified=True)["total"] == pytest.approx(0.001)
    unknown = bill_of(
        ("coder", "T1", Usage(total=10, prompt=5, completion=5)),
        config={**ENDPOINT, "model_name": "m-new"},
    )
    assert prices.priced(unknown, TABLE, True)["agents"]["coder"]["why"] == "no price for m-new"
    anonymous = bill_of(
        ("coder", "T1", Usage(total=10, prompt=5, completion=5)), config={"model": "endpoint"}
    )
    assert prices.priced(anonymous, TABLE, True)["agents"]["coder"]["cost"] is None


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ([], "expected an object"),
        ({"currency": ""}, "currency must be a short name"),
        ({"models": {"m": {"input": 1}}}, "models.m needs numbers"),
        ({"models": {"m": {"input": "x", "output": 1}}}, "models.m needs numbers"),
        ({"models": {"m": {"input": -1, "output": 1}}}, "prices are between 0"),
        ({"models": {"m": {"input": 1, "output": 1, "cached": 0}}}, "models.m must be"),
    ],
)
def test_a_bad_price_table_is_refused_by_entry(table, says):
    with pytest.raises(prices.PriceError, match=says):
        prices.parse(table)


def test_a_price_file_that_is_not_json_names_its_line(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text('{"models": {\n  "m": oops}}')
    with pytest.raises(prices.PriceError, match=r"prices.json: not JSON \(line 2"):
        prices.load(path)
    path.write_text('{"models": {"m": {"input": ' + "1" * 5000 + "}}}")
    with pytest.raises(prices.PriceError, match="longer than 4,300 digits"):
        prices.load(path)
    path.write_text(json.dumps({"models": {"m": {"input": 1, "output": 2}}}))
    assert prices.load(path).models["m"] == prices.Price(1.0, 2.0)
