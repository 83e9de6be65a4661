"""An agent's loop that stopped out of turns or inconclusive (prose twice, no tool call) is a
finding, citing the stop; a DONE from the same agent on the task later answers it. Before
these, such a run ended `out_of_turns` or `inconclusive` with no finding saying why."""

from __future__ import annotations

from runtime import loop
from runtime.budget import Budget
from runtime.diagnose import diagnose
from runtime.events import MessageSent
from runtime.journal import MemoryJournal
from runtime.model import ScriptedClient, call, say
from runtime.session import Session
from runtime.tools import Tool, Toolbox, schema


def flown(script, max_turns=12, journal=None, run_id="r-1"):
    """The coder's loop on T1, on these scripted answers, into `journal` (a new one in memory
    by default)."""
    journal = journal if journal is not None else MemoryJournal()
    agent = loop.Agent(
        "coder",
        ScriptedClient(script, "coder"),
        Toolbox([Tool("noop", "Nothing.", schema({}), lambda: "ok")]),
        "sys",
        max_turns=max_turns,
    )
    session = Session(journal, run_id)
    loop.run(agent, "task", session, Budget(10_000), task_id="T1")
    return journal, session


def done_on_t1(session, sender, recipient):
    session.emit(
        session.new(
            MessageSent,
            sender=sender,
            recipient=recipient,
            task_id="T1",
            performative="DONE",
            message_id=f"m-{sender}",
        )
    )


def position_of(journal, kind):
    [found] = [r.position for r in journal.read("run-r-1") if r.event.kind == kind]
    return found


def test_prose_twice_is_a_no_tool_call_finding_citing_the_stop():
    journal, _ = flown([say("I would edit the parser.", 10), say("Done, I think.", 10)])
    [found] = diagnose(journal.read("run-r-1"))
    assert found == {
        "kind": "no_tool_call",
        "summary": "coder stopped on T1: two replies in a row without a tool call",
        "positions": [position_of(journal, "RunInconclusive")],
        "task_id": "T1",
        "agents": ["coder"],
    }


def test_every_turn_used_is_a_turn_cap_finding_naming_the_cap():
    journal, _ = flown([call("noop", 10)] * 2, max_turns=2)
    [found] = diagnose(journal.read("run-r-1"))
    assert found["kind"] == "turn_cap_reached"
    assert found["summary"] == "coder used all 2 turns on T1 before finishing it"
    assert found["positions"] == [position_of(journal, "TurnCapReached")]


def test_one_turn_is_said_in_the_singular():
    journal, _ = flown([call("noop", 10)], max_turns=1)
    [found] = diagnose(journal.read("run-r-1"))
    assert found["summary"] == "coder used all 1 turn on T1 before finishing it"


def test_a_done_from_the_agent_on_the_task_later_answers_it():
    journal, session = flown([say("Hmm.", 10), say("Hmm again.", 10)])
    done_on_t1(session, "reviewer", "coder")  # another agent's DONE answers nothing of the coder's
    assert [f["kind"] for f in diagnose(journal.read("run-r-1"))] == ["no_tool_call"]
    done_on_t1(session, "coder", "orchestrator")
    # (Its DONE without a test run is a finding of its own.)
    assert "no_tool_call" not in [f["kind"] for f in diagnose(journal.read("run-r-1"))]
