"""Usage Minutes estimated is recorded, billed and priced as an estimate, never as the vendor's
figures: the vendor reported none ("missing"), a total no count of the call can be
("implausible": replaced whole by the estimate, whose total is its parts), or a figure past
what one call counts for ("capped"). The bill counts such calls' tokens and says how many were
estimated; a price is not put on them as fact: the cost is not known, and what the estimate
comes to is given apart.

The review's cases: `case.py usage_total_tiny` (prompt 0, completion 0, total 1) recorded
{"total": 54, "prompt": 0, "completion": 0}, priced at 0.0; `case.py usage_missing` recorded
the estimate (407 in, 19 out) priced at 0.001506, as if the vendor had said so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from runtime import flight, prices, views
from runtime.events import ModelResponded, TeamStarted, Usage, parse_event
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.model import ChatMessage
from runtime.openai_client import OpenAIClient
from runtime.openai_wire import MAX_CALL_TOKENS
from runtime.team import Services
from tests.fakellm import FakeServer, Reply, completion, wire_call

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "journals"
BEFORE = "r-raised-usage-before-marks"
ACCEPT = json.dumps({"verdict": "accept", "reasons": "minimal guard; 2 passed, 0 failed"})
TABLE = prices.parse({"currency": "USD", "models": {"m": {"input": 3.0, "output": 15.0}}})
WINDOW = [ChatMessage(role="user", content="x" * 1_600)]


def usage_of(server: FakeServer, usage: dict[str, Any] | None) -> Usage:
    server.queue(Reply(completion("fine", usage=usage)))
    return OpenAIClient(server.url, "m").complete(WINDOW, []).usage


# --- the client: what it records --------------------------------------------------------------


def test_a_total_no_count_can_be_is_replaced_by_the_estimate_said_to_be_one(
    server: FakeServer,
) -> None:
    tiny = usage_of(server, {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 1})
    assert tiny.estimated == "implausible"
    assert tiny.prompt is not None and tiny.completion is not None
    assert tiny.total == tiny.prompt + tiny.completion and tiny.prompt >= 400


def test_no_report_is_the_estimate_said_to_be_one(server: FakeServer) -> None:
    missing = usage_of(server, None)
    assert missing.estimated == "missing"
    assert missing.total == (missing.prompt or 0) + (missing.completion or 0) > 0


def test_a_figure_past_what_a_call_counts_for_is_said_to_be_capped(server: FakeServer) -> None:
    huge = usage_of(server, {"prompt_tokens": 10**30, "completion_tokens": 5})
    assert (huge.prompt, huge.estimated) == (MAX_CALL_TOKENS, "capped")


def test_the_vendors_own_figures_are_not_marked(server: FakeServer) -> None:
    honest = usage_of(server, {"prompt_tokens": 400, "completion_tokens": 30, "total_tokens": 430})
    assert honest == Usage(total=430, prompt=400, completion=30)
    # A total below its parts is raised to them: they are what the vendor bills, and prices.
    parts = usage_of(
        server, {"prompt_tokens": 4_000, "completion_tokens": 3_000, "total_tokens": 10}
    )
    assert parts == Usage(total=7_000, prompt=4_000, completion=3_000)


# --- the bill and the price --------------------------------------------------------------------


def bill_of(*usages: Usage) -> dict[str, Any]:
    r = {"run_id": "r-1"}
    config = {"model": "endpoint", "model_name": "m"}
    events: list[Any] = [TeamStarted(**r, team="solo", scenario="s", task="t", config=config)]
    for usage in usages:
        events.append(
            ModelResponded(**r, agent="coder", task_id="T1", text="", tool_calls=[], usage=usage)
        )
    journal = MemoryJournal()
    journal.append("run-r-1", events, 0)
    return views.bill(journal.read("run-r-1"))


def test_an_estimate_is_billed_as_one_and_not_priced_as_fact() -> None:
    reported = Usage(total=1_100, prompt=1_000, completion=100)
    guessed = Usage(total=426, prompt=407, completion=19, estimated="missing")
    bill = bill_of(reported, guessed)

    coder = bill["agents"]["coder"]
    assert (coder["tokens"], coder["calls"], coder["estimated"]) == (1_526, 2, 1)
    assert bill["total"]["estimated"] == 1 and bill["lines"][0]["estimated"] == 1
    money = prices.priced(bill, TABLE, verified=True)
    cost = money["agents"]["coder"]
    assert cost["cost"] is None and money["total"] is None and money["tasks"]["T1"] is None
    assert "the usage of 1 call was estimated, not reported by the vendor" in cost["why"]
    as_if = (1_407 * 3.0 + 119 * 15.0) / 1e6
    assert cost["estimate"] == pytest.approx(as_if) and money["estimate"] == pytest.approx(as_if)

    # the vendor's figures alone are priced, and no estimate is given beside the cost
    exact = prices.priced(bill_of(reported), TABLE, verified=True)
    assert exact["total"] == pytest.approx((1_000 * 3.0 + 100 * 15.0) / 1e6)
    assert exact["estimate"] is None and exact["agents"]["coder"]["estimate"] is None


# --- a whole run, and one from before -----------------------------------------------------------


@pytest.mark.slow
def test_a_reviewer_whose_usage_is_no_count_is_billed_as_estimated(
    server: FakeServer, tmp_path: Path
) -> None:
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 1}
    server.queue(Reply(completion(None, [wire_call("done", ACCEPT)], usage)))
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "m"}
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("repo-fix", "first-flight", "r-tiny", models={"reviewer": "endpoint"})
    flight.fly(journal, config, "r-tiny", tmp_path, services=Services(models=models))

    [answer] = [
        r.event
        for r in journal.read("run-r-tiny")
        if isinstance(r.event, ModelResponded) and r.event.agent == "reviewer"
    ]
    assert answer.usage.estimated == "implausible"
    assert answer.usage.total == (answer.usage.prompt or 0) + (answer.usage.completion or 0)
    bill = views.bill(journal.read("run-r-tiny"))
    assert bill["agents"]["reviewer"]["estimated"] == 1
    assert prices.priced(bill, TABLE, verified=True)["agents"]["reviewer"]["cost"] is None
    server.httpd.shutdown()
    assert flight.replay(journal, "r-tiny").identical


@pytest.mark.slow
def test_a_journal_from_before_replays_and_bills_as_it_did(tmp_path: Path) -> None:
    path = tmp_path / "before.jsonl"
    shutil.copy(FIXTURES / "raised-usage.before-marks.jsonl", path)
    journal = JsonlJournal(path)
    bill = views.bill(journal.read(f"run-{BEFORE}"))
    reviewer = bill["agents"]["reviewer"]
    # v2 said nothing of estimates: read as reported, billed and priced as they were
    assert (reviewer["tokens"], reviewer["prompt"], reviewer["estimated"]) == (54, 0, 0)

    assert flight.replay(journal, BEFORE).identical


def test_a_v2_usage_reads_as_reported() -> None:
    line = {"kind": "ModelResponded", "v": 2, "text": "", "tool_calls": []}
    event = parse_event({**line, "usage": {"total": 5, "estimated": "missing"}})
    assert event.usage == Usage(total=5)  # v2 never said, whatever a hand-written line claims
    failed = {"kind": "ModelFailed", "v": 2, "error": {"type": "E", "message": "m"}}
    assert parse_event({**failed, "usage": {"total": 5, "estimated": "capped"}}).usage == Usage(
        total=5
    )
