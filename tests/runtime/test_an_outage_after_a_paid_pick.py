"""A pick then force call whose force meets an outage (5xx, timeout, refused connection) after
the pick was answered: the pick was paid for, so the outage carries its usage, which the loop
journals on a ModelFailed and debits. The step's retry reads that back and asks again; the
bill counts both calls, and the ledger balances."""

from __future__ import annotations

import json

import pytest

from runtime import loop, views
from runtime.budget import Budget
from runtime.events import BudgetDebited, ModelCalled, ModelFailed, Usage
from runtime.journal import MemoryJournal
from runtime.model import ChatMessage, EndpointDown, ToolSpec
from runtime.openai_client import OpenAIClient
from runtime.otel import otlp_trace
from runtime.session import Session
from runtime.tools import Toolbox
from tests.fakellm import FakeServer, Reply, completion, wire_call

WEATHER: ToolSpec = {
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
PICK_USAGE = {"prompt_tokens": 50, "completion_tokens": 2}
DOWN = Reply(b"overloaded", 503)


def client(server: FakeServer) -> OpenAIClient:
    return OpenAIClient(server.url, "test-model", max_retries=0, pick_then_force=True)


def test_an_outage_on_the_force_carries_the_picks_usage(server: FakeServer) -> None:
    server.queue(Reply(completion("weather", usage=PICK_USAGE)), DOWN)
    with pytest.raises(EndpointDown) as down:
        client(server).complete([ChatMessage(role="user", content="rain?")], [WEATHER])
    assert down.value.usage == Usage(total=52, prompt=50, completion=2)
    assert len(server.requests) == 2


def test_an_outage_before_any_answer_costs_nothing(server: FakeServer) -> None:
    server.queue(DOWN)
    with pytest.raises(EndpointDown) as down:
        client(server).complete([ChatMessage(role="user", content="rain?")], [WEATHER])
    assert down.value.usage is None


def test_the_loop_journals_and_debits_the_pick_and_its_retry_asks_again(
    server: FakeServer,
) -> None:
    journal, budget = MemoryJournal(), Budget(10_000)
    agent = loop.Agent("reviewer", client(server), Toolbox([]), "sys")
    server.queue(Reply(completion("done", usage=PICK_USAGE)), DOWN)
    with pytest.raises(EndpointDown):
        loop.run(agent, "review", Session(journal, "r-1"), budget, task_id="T1")
    events = [r.event for r in journal.read("run-r-1")]
    called, failed, debited = events[-3:]
    assert isinstance(called, ModelCalled)
    assert isinstance(failed, ModelFailed) and failed.error.type == "EndpointDown"
    assert failed.usage == Usage(total=52, prompt=50, completion=2)
    assert isinstance(debited, BudgetDebited) and debited.amount == 52
    assert budget.spent == 52

    # The step is tried again: it reads the paid outage back and asks again, live.
    verdict = json.dumps({"verdict": "accept", "reasons": "fine"})
    server.queue(
        Reply(completion("done", usage={"prompt_tokens": 60, "completion_tokens": 1})),
        Reply(
            completion(
                None,
                [wire_call("done", verdict)],
                usage={"prompt_tokens": 70, "completion_tokens": 9},
            )
        ),
    )
    again = Budget(10_000)
    recorded = [r.event for r in journal.read("run-r-1")]
    result = loop.run(
        agent, "review", Session(journal, "r-1", recorded=recorded), again, task_id="T1"
    )
    assert result.status == "done" and again.spent == 52 + 61 + 79
    records = journal.read("run-r-1")
    assert [type(r.event).__name__ for r in records].count("ModelCalled") == 2
    bill = views.bill(records)
    assert bill["agents"]["reviewer"]["tokens"] == 52 + 61 + 79
    assert bill["agents"]["reviewer"]["calls"] == 2
    assert bill["spent"] == 52 + 61 + 79 and bill["balanced"]

    # The trace says the same: the outage's span carries what the pick cost, and the agent
    # went on past it (its span is not closed as failed by the outage).
    spans = otlp_trace(records)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    totals = [
        int(a["value"]["intValue"])
        for s in spans
        for a in s["attributes"]
        if a["key"] == "minutes.usage.total_tokens"
    ]
    assert sorted(totals) == [52, 61 + 79]
    [agent_span] = [s for s in spans if s["name"] == "invoke_agent reviewer"]
    assert agent_span["status"].get("code") != 2
