"""The work registry refuses duplicate work before it starts: vague-subtask's tester may not
rewrite the coder's test file, and the journal written before the registry still shows the
duplicate it made."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime import flight
from runtime.coordination.registry import WorkRegistry
from runtime.diagnose import diagnose
from runtime.events import ToolDispatched, ToolReturned
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.metrics import metrics
from runtime.model import ToolCall
from runtime.session import Session
from runtime.workspace import git

OLD = Path(__file__).resolve().parent.parent / "fixtures" / "journals"
OLD_VAGUE = OLD / "vague-subtask.before-registry.jsonl"


@pytest.mark.slow
def test_the_vague_subtask_tester_is_refused_before_it_rewrites_the_coders_test_file(fly_team):
    flown = fly_team("vague-subtask")
    assert flown.outcome.status == "done"
    [refused] = [e for e in flown.events if e.kind == "DuplicateWorkRefused"]
    assert (refused.agent, refused.task_id, refused.holder, refused.artefact) == (
        "tester",
        "T3",
        "coder",
        "tests/test_parser.py",
    )
    # the tester's write never started: no dispatch of it, and only the coder's edit in git
    tester_writes = [
        e
        for e in flown.events
        if e.kind == "ToolDispatched" and e.agent == "tester" and e.tool == "edit_file"
    ]
    assert tester_writes == []
    text = (flown.workspace / "tests" / "test_parser.py").read_text()
    assert "test_whitespace_only_input_has_no_fields" not in text
    assert "test_blank_line_has_no_fields" in text
    assert git(flown.workspace, "status", "--porcelain") == ""
    [found] = diagnose(flown.records)
    assert found["kind"] == "duplicate_work" and found["prevented"] is True
    assert found["agents"] == ["coder", "tester"]
    assert metrics(flown.records)["duplicate_work_rate"]["value"] == 0.0
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_the_journal_from_before_the_registry_still_shows_its_duplicate_and_replays():
    journal = JsonlJournal(OLD_VAGUE)
    records = journal.read_all()
    assert "DuplicateWorkRefused" not in {r.event.kind for r in records}
    [found] = diagnose(records)
    assert found["kind"] == "duplicate_work" and "prevented" not in found
    assert found["agents"] == ["coder", "tester"]
    assert metrics(records)["duplicate_work_rate"]["value"] == 0.5
    # the record holds the duplicate write, not a refusal: the record decides, as written
    assert flight.replay(journal, "r-vague-before-registry").identical


def wrote(session: Session, agent: str, task: str, path: str, call: str) -> None:
    at = {"agent": agent, "task_id": task, "tool": "edit_file", "call_id": call}
    session.emit(
        session.new(ToolDispatched, **at, args={"path": path}),
        session.new(ToolReturned, **at, result={"edited": path}),
    )


def test_an_agent_continues_its_own_work_and_another_is_refused_with_nothing_run():
    session = Session(MemoryJournal(), "r-1")
    registry = WorkRegistry(session)
    wrote(session, "coder", "T1", "src/parse.py", "c1")
    again = ToolCall(id="c2", name="edit_file", args={"path": "./src/parse.py"})
    assert registry.admit(again, {"agent": "coder", "task_id": "T1", "turn": 3}) is None
    assert registry.admit(again, {"agent": "coder", "task_id": "T4", "turn": 0}) is None
    read = ToolCall(id="c3", name="read_file", args={"path": "src/parse.py"})
    assert registry.admit(read, {"agent": "tester", "task_id": "T3"}) is None
    before = len(session.emitted)
    refused = registry.admit(again, {"agent": "tester", "task_id": "T3", "turn": 0})
    assert refused is not None and refused.error is not None
    assert refused.error.type == "DuplicateWork"
    assert "src/parse.py is coder's work on T1" in refused.error.message
    [event] = session.emitted[before:]  # the refusal alone: no dispatch, no tool result
    assert event.kind == "DuplicateWorkRefused" and event.work == "write:src/parse.py"
