"""A reply the server wrote is paid for whether or not it can be used: one cut off mid-call
(finish_reason "length"), one too large to keep, one not in the protocol's shape. Such a call
fails with the usage it reported, which the ModelFailed records (v2) and the budget debits, so
the bill has its row and the allowance sees it; a failure with nothing to say a model wrote
anything (an error sent with a 200) costs nothing. A journal from before, whose failures
recorded no usage, replays as it was and bills as it did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from runtime import flight, loop, views
from runtime.budget import Budget
from runtime.events import BudgetDebited, ModelFailed, Usage, parse_event
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.model import ChatMessage, ModelClient, ModelError, ModelResponse, ToolSpec
from runtime.openai_client import MAX_REPLY_BYTES, ModelProtocolError, OpenAIClient
from runtime.openai_wire import ModelProtocolError as WireProtocolError
from runtime.session import Session
from runtime.team import Services
from runtime.tools import Toolbox
from tests.fakellm import FakeServer, Reply, completion, wire_call

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "journals"
BEFORE = "r-cut-off-reply-before-billing"
ACCEPT = json.dumps({"verdict": "accept", "reasons": "minimal guard; 2 passed, 0 failed"})
CUT_USAGE = {"prompt_tokens": 2_000, "completion_tokens": 100_000, "total_tokens": 102_000}
HUGE_USAGE = {"prompt_tokens": 2_000, "completion_tokens": 250_000, "total_tokens": 252_000}
WEATHER: ToolSpec = {
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def cut_off(usage: dict[str, Any] | None = CUT_USAGE) -> dict[str, Any]:
    """A reply that stopped at the token limit in the middle of a done call's arguments."""
    body = completion(None, [wire_call("done", '{"verdict": "acc')], usage)
    body["choices"][0]["finish_reason"] = "length"
    return body


def ask(server: FakeServer, *replies: dict[str, Any] | bytes, **options: Any) -> ModelError:
    server.queue(*(Reply(r) for r in replies))
    client = OpenAIClient(server.url, "test-model", max_retries=0, **options)
    with pytest.raises(ModelError) as failed:
        client.complete([ChatMessage(role="user", content="review this")], [WEATHER])
    return failed.value


# --- the client: the failure carries what the call cost ---------------------------------------


def test_a_reply_cut_off_mid_call_fails_with_its_usage(server: FakeServer) -> None:
    failure = ask(server, cut_off())
    assert isinstance(failure, ModelProtocolError) and "cut off" in str(failure)
    assert failure.usage == Usage(total=102_000, prompt=2_000, completion=100_000)


def test_a_reply_too_large_to_keep_fails_with_its_usage(server: FakeServer) -> None:
    failure = ask(server, completion("A" * 1_000_000, [wire_call("done", ACCEPT)], HUGE_USAGE))
    assert "as the journal writes it" in str(failure)
    assert failure.usage == Usage(total=252_000, prompt=2_000, completion=250_000)


def test_a_reply_in_no_protocol_shape_fails_with_the_usage_it_reported(
    server: FakeServer,
) -> None:
    failure = ask(server, {"choices": "many", "usage": CUT_USAGE})
    assert failure.usage == Usage(total=102_000, prompt=2_000, completion=100_000)


def test_a_reply_that_reported_nothing_is_billed_at_an_estimate_of_what_it_holds(
    server: FakeServer,
) -> None:
    failure = ask(server, cut_off(usage=None))
    assert failure.usage is not None and failure.usage.total > 0


def test_a_reply_without_choices_and_no_usage_costs_nothing(server: FakeServer) -> None:
    # (An error object sent with a 200 is a gateway's answer, tried again as an outage: the
    # client's tests. This one is the API's shape, with nothing in it.)
    failure = ask(server, {"id": "c-1", "object": "chat.completion"})
    assert "no 'choices'" in str(failure) and failure.usage is None


def test_a_reply_too_long_to_read_is_billed_at_an_estimate_of_what_was_read(
    server: FakeServer,
) -> None:
    failure = ask(server, completion("B" * (MAX_REPLY_BYTES + 10), [], CUT_USAGE))
    assert "larger than 1024 KiB" in str(failure)
    assert failure.usage is not None and failure.usage.completion == (MAX_REPLY_BYTES + 1) // 4 + 1
    # a page that is no reply at all says nothing of a model
    assert ask(server, b"<html>" + b"x" * MAX_REPLY_BYTES).usage is None


def test_the_pick_of_a_pick_then_force_call_is_billed_with_its_failed_force(
    server: FakeServer,
) -> None:
    pick = completion("weather", usage={"prompt_tokens": 50, "completion_tokens": 2})
    failure = ask(server, pick, cut_off(), pick_then_force=True)
    assert failure.usage == Usage(total=102_052, prompt=2_050, completion=100_002)


# --- the loop: journalled on the failure, and debited ------------------------------------------


class Failing(ModelClient):
    """A model whose every answer is unusable and cost `usage`."""

    def __init__(self, usage: Usage | None) -> None:
        self.usage = usage

    def complete(self, messages: Any, tools: Any) -> ModelResponse:
        error = WireProtocolError("the reply was cut off")
        error.usage = self.usage
        raise error


def agent(usage: Usage | None) -> loop.Agent:
    return loop.Agent("reviewer", Failing(usage), Toolbox([]), "sys")


def test_the_loop_journals_the_usage_on_the_failure_and_debits_it() -> None:
    journal, budget = MemoryJournal(), Budget(1_000_000)
    with pytest.raises(ModelError):
        loop.run(agent(Usage(total=7_000)), "t", Session(journal, "r-1"), budget, task_id="T1")

    events = [r.event for r in journal.read("run-r-1")]
    failed, debited = events[-2:]
    assert isinstance(failed, ModelFailed) and failed.usage == Usage(total=7_000)
    assert isinstance(debited, BudgetDebited) and debited.amount == 7_000
    assert budget.spent == 7_000
    bill = views.bill(journal.read("run-r-1"))
    assert bill["agents"]["reviewer"]["tokens"] == 7_000 and bill["spent"] == 7_000
    assert bill["balanced"]

    # replayed from the record alone: the same failure, the same debit
    replayed = Budget(1_000_000)
    session = Session(MemoryJournal(), "r-1", recorded=events, replay=True)
    with pytest.raises(ModelError):
        loop.run(agent(None), "t", session, replayed, task_id="T1")
    assert session.cursor == len(events) and replayed.spent == 7_000


def test_a_failure_that_cost_nothing_debits_nothing() -> None:
    journal, budget = MemoryJournal(), Budget(1_000)
    with pytest.raises(ModelError):
        loop.run(agent(None), "t", Session(journal, "r-1"), budget, task_id="T1")
    last = [r.event for r in journal.read("run-r-1")][-1]
    assert isinstance(last, ModelFailed) and last.usage is None and budget.spent == 0


# --- a whole run, and one from before -----------------------------------------------------------


@pytest.mark.slow
def test_a_reviewers_cut_off_replies_are_on_the_bill_and_the_ledger(
    server: FakeServer, tmp_path: Path
) -> None:
    """`case.py length_trunc_big` of the review: two paid calls, no reviewer row, nothing
    debited. Now both are billed to the reviewer and debited from the run's ledger."""
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "m"}
    server.queue(Reply(cut_off()), Reply(cut_off()))
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan(
        "repo-fix", "first-flight", "r-cut", models={"reviewer": "endpoint"}, allowance=10**7
    )
    flight.fly(journal, config, "r-cut", tmp_path, services=Services(models=models))

    events = [r.event for r in journal.read("run-r-cut")]
    failures = [e for e in events if isinstance(e, ModelFailed)]
    assert [f.usage.total for f in failures if f.usage] == [102_000, 102_000]
    bill = views.bill(journal.read("run-r-cut"))
    assert (bill["agents"]["reviewer"]["tokens"], bill["agents"]["reviewer"]["calls"]) == (
        204_000,
        2,
    )
    assert bill["ledgers"]["reviewer"]["spent"] == 204_000 and bill["balanced"]
    server.httpd.shutdown()
    assert flight.replay(journal, "r-cut").identical


@pytest.mark.slow
def test_a_journal_from_before_replays_and_bills_as_it_did(tmp_path: Path) -> None:
    path = tmp_path / "before.jsonl"
    shutil.copy(FIXTURES / "cut-off-reply.before-billing.jsonl", path)
    journal = JsonlJournal(path)
    failures = [r.event for r in journal.read(f"run-{BEFORE}") if r.event.kind == "ModelFailed"]
    assert len(failures) == 2 and all(f.usage is None for f in failures)  # v1: none recorded
    bill = views.bill(journal.read(f"run-{BEFORE}"))
    assert "reviewer" not in bill["agents"] and bill["spent"] == 555

    assert flight.replay(journal, BEFORE).identical


def test_a_v1_failure_reads_with_no_usage() -> None:
    line = {"kind": "ModelFailed", "v": 1, "error": {"type": "E", "message": "m"}}
    assert parse_event({**line, "usage": {"total": 5}}).usage is None  # v1 recorded none
