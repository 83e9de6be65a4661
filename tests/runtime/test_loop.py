"""The agent loop's stop conditions, nudge, retries and operator stop."""

from __future__ import annotations

import pytest

from runtime import loop
from runtime.budget import Budget, SubBudget
from runtime.journal import MemoryJournal
from runtime.model import ScriptedClient, call, say
from runtime.session import Session
from runtime.stops import Interrupted, StopRequest
from runtime.tools import Tool, Toolbox, schema


class Flaky:
    """Fails the first `failures` times it runs, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.runs = 0

    def __call__(self) -> dict:
        self.runs += 1
        if self.runs <= self.failures:
            raise RuntimeError("runner exited 137")
        return {"passed": 2, "failed": 0}


def make(script, tools=(), retries=0, max_turns=12):
    tools = list(tools) or [Tool("noop", "Nothing.", schema({}), lambda: "ok")]
    return loop.Agent(
        "coder",
        ScriptedClient(script, "coder"),
        Toolbox(tools),
        "sys",
        max_turns=max_turns,
        retries=retries,
    )


def fly(agent, budget=None, stop=None, journal=None):
    journal = journal or MemoryJournal()
    session = Session(journal, "r-1", stop=stop)
    result = loop.run(agent, "task", session, budget or Budget(10_000), task_id="T1")
    events = [r.event for r in journal.read("run-r-1")]
    assert events[-1].kind == "StatusReported"  # every run ends with the agent's last word
    return result, events[:-1]


def kinds(events):
    return [e.kind for e in events]


def test_the_done_tool_stops_the_run_with_its_report():
    result, events = fly(make([call("noop", 10), call("done", 5, summary="fixed")]))
    assert (result.status, result.turns, result.report) == ("done", 2, {"summary": "fixed"})
    assert kinds(events)[-1] == "AgentFinished"


def test_two_calls_of_900_against_1000_halt_after_the_second():
    result, events = fly(make([call("noop", 900)] * 3), Budget(1_000))
    assert (result.status, result.turns) == ("halted", 2)
    assert kinds(events).count("ModelCalled") == 2
    exhausted = events[-1]
    assert exhausted.kind == "BudgetExhausted" and (exhausted.spent, exhausted.allowance) == (
        1_800,
        1_000,
    )


def test_one_call_of_5000_against_1000_halts_after_the_first():
    result, events = fly(make([call("noop", 5_000)] * 2), Budget(1_000))
    assert (result.status, result.turns) == ("halted", 1)
    assert events[-1].spent == 5_000  # the overshoot is one call, never a mid-turn kill


def test_the_budget_is_checked_at_the_turn_boundary_so_the_turns_tools_still_run():
    _result, events = fly(make([call("noop", 5_000)]), Budget(1_000))
    assert kinds(events)[-3:] == ["ToolDispatched", "ToolReturned", "BudgetExhausted"]


def test_the_turn_cap_stops_the_run():
    result, events = fly(make([call("noop", 1)] * 5, max_turns=3))
    assert (result.status, result.turns) == ("out_of_turns", 3)
    assert events[-1].kind == "TurnCapReached" and events[-1].max_turns == 3


def test_plain_prose_gets_one_nudge_and_a_second_drift_is_inconclusive():
    result, events = fly(make([say("thinking", 5), say("still thinking", 5)]))
    assert result.status == "inconclusive"
    assert kinds(events).count("AgentNudged") == 1
    assert events[-1].kind == "RunInconclusive"


def test_a_tool_call_between_two_drifts_resets_the_nudge():
    result, events = fly(make([say("a", 1), call("noop", 1), say("b", 1), call("done", 1)]))
    assert result.status == "done"
    assert kinds(events).count("AgentNudged") == 2


def test_the_nudge_reaches_the_model_in_the_next_window():
    seen = []

    class Watching(ScriptedClient):
        def complete(self, messages, tools):
            seen.append([m.content for m in messages])
            return super().complete(messages, tools)

    agent = make([say("a", 1), call("done", 1)])
    agent.client = Watching(agent.client.script, "coder")
    fly(agent)
    assert seen[1][-1] == loop.NUDGE


def test_every_tool_failure_is_an_observation_and_the_loop_goes_on():
    def boom():
        raise ValueError("bad")

    tools = [Tool("boom", "Fails.", schema({}), boom)]
    script = [call("boom", 1), call("teleport", 1), call("boom", 1, extra=1), call("done", 1)]
    result, events = fly(make(script, tools))
    assert result.status == "done"
    errors = [e.error.type for e in events if e.kind == "ToolReturned"]
    assert errors == ["ValueError", "UnknownTool", "InvalidArguments"]


def test_retries_redispatch_a_failed_call_before_the_model_sees_it():
    flaky = Flaky(failures=1)
    tools = [Tool("run_tests", "Tests.", schema({}), flaky)]
    agent = make([call("run_tests", 70), call("done", 40)], tools, retries=1)
    _result, events = fly(agent)
    returned = [e for e in events if e.kind == "ToolReturned"]
    assert [(e.attempt, e.error is None) for e in returned] == [(1, False), (2, True)]
    assert kinds(events).count("ModelCalled") == 2 and flaky.runs == 2


def test_without_retries_the_model_sees_the_error_and_pays_for_another_call():
    flaky = Flaky(failures=1)
    tools = [Tool("run_tests", "Tests.", schema({}), flaky)]
    agent = make([call("run_tests", 70), call("run_tests", 70), call("done", 40)], tools)
    _result, events = fly(agent)
    assert kinds(events).count("ModelCalled") == 3


def test_a_tool_that_is_not_retry_safe_is_never_retried_automatically():
    flaky = Flaky(failures=5)
    tools = [Tool("refund", "Pays money.", schema({}), flaky, retry_safe=False)]
    fly(make([call("refund", 1), call("done", 1)], tools, retries=3))
    assert flaky.runs == 1


def test_refused_calls_are_not_retried():
    _result, events = fly(make([call("teleport", 1), call("done", 1)], retries=3))
    assert len([e for e in events if e.kind == "ToolReturned"]) == 1


def test_an_operator_stop_is_honoured_at_the_turn_boundary_and_the_run_resumes_cleanly():
    journal = MemoryJournal()
    asked = []

    def stop():
        asked.append(1)
        return StopRequest(by="ann", reason="lunch") if len(asked) == 2 else None

    script = [call("noop", 1), call("noop", 1), call("done", 1, summary="ok")]
    with pytest.raises(Interrupted, match="interrupted by ann: lunch"):
        fly(make(script), stop=stop, journal=journal)
    events = [r.event for r in journal.read("run-r-1")]
    assert events[-1].kind == "RunInterrupted" and events[-1].by == "ann"
    assert kinds(events).count("ModelCalled") == 1  # the second turn never started

    session = Session(journal, "r-1", resumed_by="bob")
    result = loop.run(make(script), "task", session, Budget(10_000), task_id="T1")
    assert result.status == "done"
    events = [r.event for r in journal.read("run-r-1")]
    k = kinds(events)
    assert k[k.index("RunInterrupted") + 1] == "RunResumed"
    assert events[k.index("RunResumed")].by == "bob"
    assert k.count("ModelCalled") == 3 and k.count("RunStarted") == 1


def test_a_sub_budget_halts_its_agent_and_leaves_the_parent_standing():
    parent = Budget(5_000)
    coder = SubBudget(parent, 100, "coder")
    reviewer = SubBudget(parent, 200, "reviewer")
    result, _ = fly(make([call("noop", 60)] * 3), coder)
    assert result.status == "halted" and coder.spent == 120
    assert parent.spent == 120 and not parent.exhausted() and not reviewer.exhausted()


def test_the_verification_reserve_is_out_of_the_coders_reach():
    parent = Budget(1_000, reserve=300)
    coder = SubBudget(parent, 1_000, "coder")
    tester = SubBudget(parent, 1_000, "tester", may_use_reserve=True)
    result, _ = fly(make([call("noop", 400)] * 3), coder)
    assert result.status == "halted" and parent.spent == 800
    assert coder.exhausted() and not tester.exhausted()
