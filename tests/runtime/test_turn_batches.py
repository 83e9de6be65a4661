"""A turn's events are written in two batches, and none is lost on the way.

The agent loop holds a model's answer until its tool call's dispatch, and a tool's result until
the next model call (Session.hold): two commits a turn, where there were four. What must stay
true: a model call is on record before the model is asked, a dispatch before its tool runs, and
everything a step did before the step ends or anything raises."""

from __future__ import annotations

import contextlib

import pytest

from runtime import loop
from runtime.budget import Budget
from runtime.journal import MemoryJournal
from runtime.model import ScriptedClient, call
from runtime.session import Session
from runtime.stops import StepComplete
from runtime.tools import Tool, Toolbox, schema

STREAM = "run-r-1"


class Batches(MemoryJournal):
    """A memory journal that notes each append's kinds, and what was stored when a tool ran."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def append(self, stream, events, expected_version, fence=None):
        self.batches.append([e.kind for e in events])
        return super().append(stream, events, expected_version, fence)

    def kinds(self) -> list[str]:
        return [r.event.kind for r in self.read(STREAM)]


def agent(journal: Batches, turns: int, seen: list[list[str]]) -> loop.Agent:
    def read(path: str) -> str:
        seen.append(journal.kinds())  # what was durable when the tool ran
        return "text"

    tool = Tool("read_file", "Read.", schema({"path": {"type": "string"}}), read)
    script = [call("read_file", 10, path="a.py") for _ in range(turns)]
    return loop.Agent(
        "coder",
        ScriptedClient([*script, call("done", 5)], "coder"),
        Toolbox([tool]),
        "sys",
        max_turns=turns + 2,
    )


def test_a_turn_is_two_batches_and_each_intent_is_stored_before_it_acts():
    journal, seen = Batches(), []
    loop.run(agent(journal, 3, seen), "task", Session(journal, "r-1"), Budget(10_000))
    turn = ["ModelResponded", "BudgetDebited", "ToolDispatched"]
    assert journal.batches[:7] == [
        ["RunStarted"],
        ["ModelCalled"],
        turn,
        ["ToolReturned", "ModelCalled"],
        turn,
        ["ToolReturned", "ModelCalled"],
        turn,
    ]
    # Every tool ran with its own dispatch, and the answer that asked for it, on record.
    for before in seen:
        assert before[-3:] == turn
    assert len(seen) == 3
    stored = journal.kinds()
    assert stored.count("ToolReturned") == 3 and stored[-2:] == ["AgentFinished", "StatusReported"]


def test_a_step_that_ends_writes_the_result_it_held():
    journal, seen, parked = Batches(), [], []

    def pause() -> None:  # a warm flight parks here until its next step (runtime/warm.py)
        parked.append(journal.kinds())
        raise StepComplete()

    session = Session(journal, "r-1", steps=2)
    session.pause = pause
    with pytest.raises(StepComplete):
        loop.run(agent(journal, 5, seen), "task", session, Budget(10_000))
    # The step ended at the third turn's boundary: what it did was stored before it parked.
    [stored] = parked
    assert stored[-2:] == ["ToolDispatched", "ToolReturned"]
    assert stored.count("ToolReturned") == 2
    assert session.version == len(stored)


class Breaks(Session):
    """A session whose harness raises at the top of the second turn (after the first tool ran)."""

    def injected(self, agent: str):
        if self.counts["ToolReturned"] == 1:
            raise RuntimeError("the harness broke")
        return super().injected(agent)


def test_a_result_held_for_the_next_batch_is_written_when_the_loop_raises():
    journal, seen = Batches(), []
    with pytest.raises(RuntimeError, match="the harness broke"):
        loop.run(agent(journal, 3, seen), "task", Breaks(journal, "r-1"), Budget(10_000))
    assert journal.kinds()[-1] == "ToolReturned"  # the tool ran: its outcome is not lost


def test_a_resumed_run_of_batched_turns_writes_the_journal_of_an_uninterrupted_one():
    whole, seen = Batches(), []
    loop.run(agent(whole, 6, seen), "task", Session(whole, "r-1"), Budget(10_000))
    stepped = Batches()
    for _ in range(10):  # a turn a step, each a new session over what is stored
        with contextlib.suppress(StepComplete):
            loop.run(
                agent(stepped, 6, []), "task", Session(stepped, "r-1", steps=1), Budget(10_000)
            )
    one = [r.event for r in whole.read(STREAM)]
    other = [r.event for r in stepped.read(STREAM)]
    assert [e.kind for e in one] == [e.kind for e in other]
    assert all(a.same_as(b) for a, b in zip(one, other, strict=True))
