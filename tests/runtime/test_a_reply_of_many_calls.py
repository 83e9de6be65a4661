"""A reply that asks for more tool calls than the loop runs in one turn (loop.MAX_CALLS): the
first MAX_CALLS run, the agent is told of the rest, and the run goes on at the turn boundary,
where its ceilings and an operator's stop are looked at. Before, a reply of 10,000 calls ran
every one of them inside one turn, far past the run's seconds ceiling."""

from __future__ import annotations

from runtime import loop
from runtime.budget import Budget
from runtime.journal import MemoryJournal
from runtime.model import ModelResponse, ScriptedClient, ToolCall, Usage, call
from runtime.session import Session
from runtime.tools import Tool, Toolbox, schema

ASKED = loop.MAX_CALLS + 8


class Watched(ScriptedClient):
    """A scripted model that keeps each window it was sent."""

    def __init__(self, script):
        super().__init__(script, "note-agent")
        self.windows = []

    def complete(self, messages, tools):
        self.windows.append(list(messages))
        return super().complete(messages, tools)


def script():
    many = [ToolCall(id="", name="note", args={"n": n}) for n in range(ASKED)]
    return [ModelResponse(tool_calls=many, usage=Usage(total=10)), call("done", 5, summary="ok")]


def agent(noted, client=None):
    note = Tool(
        "note", "Note a number.", schema({"n": {"type": "integer"}}), lambda n: noted.append(n)
    )
    return loop.Agent("note-agent", client or Watched(script()), Toolbox([note]), "sys")


def fly(journal, noted, client=None):
    session = Session(journal, "r-1")
    return loop.run(agent(noted, client), "task", session, Budget(10_000), task_id="T1")


def events(journal):
    return [r.event for r in journal.read("run-r-1")]


def replays(journal):
    replay = Session(MemoryJournal(), "r-1", recorded=events(journal), replay=True)
    loop.run(agent([]), "task", replay, Budget(10_000), task_id="T1")
    return replay.live  # the whole record was gone through, and matched


def test_the_calls_past_the_cap_are_not_run_and_the_agent_is_told():
    journal, noted, client = MemoryJournal(), [], Watched(script())
    assert fly(journal, noted, client).status == "done"
    assert noted == list(range(loop.MAX_CALLS))
    told = [e for e in events(journal) if e.kind == "AgentNudged"]
    assert [e.text for e in told] == [loop.too_many(ASKED)]
    assert f"the other {ASKED - loop.MAX_CALLS} were not" in told[0].text
    # The next window holds the calls run, each answered (as the protocol wants), then the word.
    window = client.windows[1]
    said = next(m for m in window if m.role == "assistant")
    assert len(said.tool_calls) == loop.MAX_CALLS
    answered = [m.tool_call_id for m in window if m.role == "tool"]
    assert answered == [c.id for c in said.tool_calls]
    assert window[-1].role == "user" and window[-1].content == loop.too_many(ASKED)
    assert replays(journal)


def test_a_run_stopped_inside_such_a_turn_resumes_to_the_same_journal():
    whole = MemoryJournal()
    fly(whole, [])
    recorded = events(whole)
    returned = [i for i, e in enumerate(recorded) if e.kind == "ToolReturned"]
    cut = MemoryJournal()
    cut.append("run-r-1", recorded[: returned[9] + 1], expected_version=0)
    noted = []
    assert fly(cut, noted).status == "done"
    assert noted == list(range(10, loop.MAX_CALLS))  # the first ten were run before the stop
    assert [e.kind for e in events(cut)] == [e.kind for e in recorded]


def test_a_journal_written_before_the_cap_replays_its_every_call(monkeypatch):
    journal, noted = MemoryJournal(), []
    monkeypatch.setattr(loop, "MAX_CALLS", 10_000)
    fly(journal, noted)
    assert len(noted) == ASKED
    monkeypatch.undo()
    assert replays(journal)
