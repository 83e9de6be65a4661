"""A model server's usage report is what a run's budget debits, so it is read as a figure a
hostile or broken server wrote: a call never counts for less than its prompt and completion
together, nor far under what the client itself estimates, nor for more than MAX_CALL_TOKENS;
and the BudgetExhausted that ends a run tells a sum the journal can hold, so a huge report ends
the run out of budget instead of leaving it unended for good."""

from __future__ import annotations

from typing import Any

import pytest

from runtime import cli, loop
from runtime.budget import Budget
from runtime.events import MAX_INT, Usage
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.model import ChatMessage, ScriptedClient, call
from runtime.openai_client import OpenAIClient
from runtime.openai_wire import MAX_CALL_TOKENS, parse_usage, plausible
from runtime.session import Session
from runtime.tools import Tool, Toolbox, schema
from tests.fakellm import FakeServer, Reply, completion, wire_call


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # a total of 1 beside millions: the split is what the call cost
        (
            {"prompt_tokens": 5_000_000, "completion_tokens": 5_000_000, "total_tokens": 1},
            (10_000_000, 5_000_000, 5_000_000),
        ),
        # a total above the split (reasoning tokens, say) stands
        ({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 40}, (40, 10, 5)),
        # past what one call can cost: counted as the most one call is charged
        ({"total_tokens": 2**40}, (MAX_CALL_TOKENS, None, None)),
        ({"total_tokens": 10**30, "prompt_tokens": 3}, (MAX_CALL_TOKENS, 3, None)),
        # not a count (negative, a fraction, a flag, text): missing
        ({"total_tokens": -5, "prompt_tokens": 7, "completion_tokens": 2.5}, (7, 7, None)),
        ({"total_tokens": True, "prompt_tokens": "9", "completion_tokens": 4}, (4, None, 4)),
    ],
)
def test_a_reported_usage_counts_at_least_its_parts_and_at_most_a_call(
    raw: dict[str, Any], expected: tuple[int, int | None, int | None]
) -> None:
    usage = parse_usage(raw)
    assert usage is not None
    assert (usage.total, usage.prompt, usage.completion) == expected


@pytest.mark.parametrize("raw", [{"total_tokens": -1}, {"total_tokens": float("inf")}, {}])
def test_a_usage_with_no_count_in_it_is_none(raw: dict[str, Any]) -> None:
    assert parse_usage(raw) is None


def test_a_total_far_under_the_estimate_is_replaced_by_the_estimate_said_to_be_one() -> None:
    estimate = Usage(total=8_000, prompt=7_990, completion=10)
    said = Usage(total=8_000, prompt=7_990, completion=10, estimated="implausible")
    assert plausible(Usage(total=1), estimate) == said
    honest = Usage(total=2_100, prompt=2_000, completion=100)
    assert plausible(honest, estimate) is honest
    assert plausible(None, estimate) == said.model_copy(update={"estimated": "missing"})


def test_the_client_debits_no_less_than_the_floor_of_its_estimate(server: FakeServer) -> None:
    client = OpenAIClient(server.url, "test-model")
    server.queue(Reply(completion("ok", usage={"total_tokens": 1})))

    response = client.complete([ChatMessage(role="user", content="x" * 40_000)], [])

    assert response.usage.total >= 40_000 // 32


def test_a_sum_past_counting_ends_the_run_out_of_budget() -> None:
    """Two calls, recorded before a call's usage was bounded, whose sum is past MAX_INT: the run
    (resumed) halts with a BudgetExhausted the journal holds, where that event was refused and
    the run stood unended at every resume."""
    agent = loop.Agent(
        "coder",
        ScriptedClient([call("noop", 100), call("noop", MAX_INT)], "coder"),
        Toolbox([Tool("noop", "Nothing.", schema({}), lambda: "ok")]),
        "sys",
    )
    journal = MemoryJournal()
    result = loop.run(agent, "task", Session(journal, "r-1"), Budget(5_000), task_id="T1")

    assert result.status == "halted"
    [stopped] = [r.event for r in journal.read("run-r-1") if r.event.kind == "BudgetExhausted"]
    assert (stopped.spent, stopped.allowance) == (MAX_INT, 5_000)


def test_a_report_of_2_to_the_40_halts_the_run_on_the_command_line(
    server: FakeServer, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", server.url)
    monkeypatch.setenv("MINUTES_MODEL", "some-model")
    server.queue(
        Reply(completion(None, [wire_call("list_files", "{}", "c1")], {"total_tokens": 100})),
        Reply(completion(None, [wire_call("list_files", "{}", "c2")], {"total_tokens": 2**40})),
    )
    path = tmp_path / "j.jsonl"
    fly = ["fly", "--team", "solo", "--model", "endpoint", "--no-sandbox", "--journal", str(path)]

    code = cli.main([*fly, "--run-id", "r-big"])

    said = capsys.readouterr().err
    assert code == cli.EXIT_VERDICT, said  # a verdict (halted), not an error (2)
    events = [r.event for r in JsonlJournal(path).read("run-r-big")]
    [stopped] = [e for e in events if e.kind == "BudgetExhausted"]
    assert stopped.spent == 100 + MAX_CALL_TOKENS
    assert events[-1].kind == "TeamFinished" and events[-1].status == "halted"
    assert cli.main(["replay", str(path)]) == cli.EXIT_OK
