"""A spent allowance is a hard ceiling at the turn boundary: the run ends there, before any
further model call or effect, and the halt names the ledger that was spent and the agent that
spent it (runtime/overspent.py).

The review's case (`case.py usage_inconsistent`): the reviewer's one reply, an ACCEPT, reports
7,000 tokens against a run allowance of 5,000. The run stood at 7,555 of 5,000, the reviewer's
done was taken, the candidate was merged into main, the tester ran a whole turn (a paid call
and run_tests), and the halt was told as the tester's ("spent 90, allowance 750")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from runtime import flight, loop
from runtime.budget import Budget, SubBudget
from runtime.diagnose import diagnose
from runtime.events import BudgetExhausted, Usage, parse_event
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.model import ModelClient, ModelResponse, ScriptedClient, call
from runtime.openai_wire import ModelProtocolError
from runtime.session import Session
from runtime.team import Services
from runtime.tools import Tool, Toolbox, schema
from tests.fakellm import FakeServer, Reply, completion, wire_call

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "journals"
BEFORE = "r-breach-on-done-before-ceiling"
ACCEPT = json.dumps({"verdict": "accept", "reasons": "minimal guard; 2 passed, 0 failed"})


def noop() -> Tool:
    return Tool("noop", "Nothing.", schema({}), lambda: "ok")


def agent(script: list[Any], name: str = "coder") -> loop.Agent:
    return loop.Agent(name, ScriptedClient(script, name), Toolbox([noop()]), "sys")


def fly(agent: loop.Agent, budget: Budget) -> tuple[loop.AgentResult, list[Any]]:
    journal = MemoryJournal()
    result = loop.run(agent, "task", Session(journal, "r-1"), budget, task_id="T1")
    return result, [r.event for r in journal.read("run-r-1")]


def kinds(events: list[Any]) -> list[str]:
    return [e.kind for e in events]


def replays(events: list[Any], agent: loop.Agent, budget: Budget) -> bool:
    session = Session(MemoryJournal(), "r-1", recorded=events, replay=True)
    loop.run(agent, "task", session, budget, task_id="T1")
    return session.cursor == len(events)


# --- the loop ----------------------------------------------------------------------------------


def test_a_done_on_the_turn_that_spends_the_runs_allowance_is_not_taken() -> None:
    script = [call("noop", 10), call("done", 2_000, summary="fixed")]
    result, events = fly(agent(script), Budget(1_000))

    assert (result.status, result.report) == ("halted", None)
    assert "AgentFinished" not in kinds(events)
    [halt] = [e for e in events if isinstance(e, BudgetExhausted)]
    assert (halt.ledger, halt.spent, halt.allowance, halt.turn) == ("run", 2_010, 1_000, 1)
    assert replays(events, agent(script), Budget(1_000))


def test_a_done_that_spends_only_its_own_share_stands() -> None:
    """An agent's share halts only that agent, which stops at its done anyway."""
    run = Budget(10_000)
    result, events = fly(agent([call("done", 500, summary="fixed")]), SubBudget(run, 100, "coder"))
    assert (result.status, result.report) == ("done", {"summary": "fixed"})
    assert "BudgetExhausted" not in kinds(events)


def test_the_calls_of_the_breaching_reply_before_its_done_still_run() -> None:
    both = ModelResponse(
        tool_calls=[call("noop", 0).tool_calls[0], call("done", 0, summary="s").tool_calls[0]],
        usage=Usage(total=5_000),
    )
    _, events = fly(agent([both]), Budget(1_000))
    assert kinds(events)[-4:] == [
        "ToolDispatched",
        "ToolReturned",
        "BudgetExhausted",
        "StatusReported",
    ]


def test_a_spent_pot_is_not_asked_again() -> None:
    """A budget another agent spent halts the next one before its first model call."""
    run = Budget(1_000)
    run.debit(1_200)  # the reviewer's turn
    result, events = fly(agent([call("noop", 90)], "tester"), SubBudget(run, 750, "tester"))

    assert (result.status, result.turns) == ("halted", 0)
    assert "ModelCalled" not in kinds(events) and "ToolDispatched" not in kinds(events)
    [halt] = [e for e in events if isinstance(e, BudgetExhausted)]
    assert (halt.agent, halt.ledger, halt.spent, halt.allowance) == ("tester", "run", 1_200, 1_000)


class PaidFailure(ModelClient):
    def complete(self, messages: Any, tools: Any) -> ModelResponse:
        error = ModelProtocolError("the reply was cut off")
        error.usage = Usage(total=102_000)
        raise error


def test_a_paid_failure_that_spends_the_allowance_ends_its_turn_halted() -> None:
    paid = loop.Agent("reviewer", PaidFailure(), Toolbox([]), "sys")
    result, events = fly(paid, Budget(5_000))
    assert result.status == "halted"  # not the model's failure: the ceiling comes first
    assert kinds(events)[-4:] == [
        "ModelFailed",
        "BudgetDebited",
        "BudgetExhausted",
        "StatusReported",
    ]
    assert replays(events, loop.Agent("reviewer", PaidFailure(), Toolbox([]), "sys"), Budget(5_000))


def test_a_halt_by_the_runs_reserve_says_what_was_held_back() -> None:
    run = Budget(1_000, reserve=200)
    _, events = fly(agent([call("noop", 900)]), SubBudget(run, 5_000, "coder"))
    [halt] = [e for e in events if isinstance(e, BudgetExhausted)]
    assert (halt.ledger, halt.allowance, halt.held) == ("run", 1_000, 200)
    assert (
        halt.said() == "the run's allowance 1,000 tokens less 200 kept for verification, spent 900"
    )


# --- the review's case, on a model endpoint ----------------------------------------------------


@pytest.mark.slow
def test_a_reviewer_whose_accept_spends_the_run_ends_it_before_the_merge(
    server: FakeServer, tmp_path: Path
) -> None:
    usage = {"prompt_tokens": 4_000, "completion_tokens": 3_000, "total_tokens": 10}
    server.queue(Reply(completion(None, [wire_call("done", ACCEPT)], usage)))
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "m"}
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("repo-fix", "first-flight", "r-breach", models={"reviewer": "endpoint"})
    outcome = flight.fly(journal, config, "r-breach", tmp_path, services=Services(models=models))

    events = [r.event for r in journal.read("run-r-breach")]
    assert outcome.status == "halted"
    assert "Integrated" not in kinds(events)  # the ACCEPT of the breaching turn merged nothing
    assert "tester" not in {e.agent for e in events if e.kind == "RunStarted"}
    assert [e.agent for e in events if e.kind == "AgentFinished"] == ["orchestrator", "coder"]
    [halt] = [e for e in events if isinstance(e, BudgetExhausted)]
    assert (halt.agent, halt.ledger, halt.spent, halt.allowance) == (
        "reviewer",
        "run",
        7_555,
        5_000,
    )
    assert outcome.reason == (
        "reviewer ran out of budget on T1 (the run's allowance 5,000 tokens, spent 7,555)"
    )
    [finding] = [
        f for f in diagnose(journal.read("run-r-breach")) if f["kind"] == "budget_exhausted"
    ]
    assert "reviewer ran out of budget on T1" in finding["summary"]
    assert "the run's allowance 5,000 tokens, spent 7,555" in finding["summary"]
    server.httpd.shutdown()
    assert flight.replay(journal, "r-breach").identical


@pytest.mark.slow
def test_a_journal_from_before_replays_its_merge_and_its_halt_as_they_were(tmp_path: Path) -> None:
    path = tmp_path / "before.jsonl"
    shutil.copy(FIXTURES / "breach-on-done.before-ceiling.jsonl", path)
    journal = JsonlJournal(path)
    events = [r.event for r in journal.read(f"run-{BEFORE}")]
    assert "Integrated" in kinds(events)  # the record decides: merged, as it was
    [halt] = [e for e in events if isinstance(e, BudgetExhausted)]
    assert (halt.agent, halt.ledger, halt.spent, halt.allowance) == ("tester", None, 90, 750)
    [finding] = [
        f for f in diagnose(journal.read(f"run-{BEFORE}")) if f["kind"] == "budget_exhausted"
    ]
    assert "(its allowance 750 tokens, spent 90)" in finding["summary"]

    assert flight.replay(journal, BEFORE).identical


def test_a_v1_halt_reads_with_no_ledger() -> None:
    line = {"kind": "BudgetExhausted", "v": 1, "spent": 90, "allowance": 750}
    halt = parse_event({**line, "ledger": "run", "held": 5})
    assert (halt.ledger, halt.held) == (None, 0)  # v1 named none
