"""Every agent's last word is a structured status (seed 02's vocabulary): its own when it says
one, the harness's when it says nothing, and a word outside the vocabulary is not trusted."""

from __future__ import annotations

import pytest

from runtime import loop
from runtime.budget import Budget
from runtime.coordination.statuses import STATUSES, structured
from runtime.diagnose import diagnose
from runtime.events import AgentFinished, StatusNormalised, StatusReported
from runtime.journal import MemoryJournal, Recorded
from runtime.model import ScriptedClient, call, say
from runtime.session import Session
from runtime.tools import Tool, Toolbox, schema

NOOP = Tool("noop", "Nothing.", schema({}), lambda: "ok")


def agent(script, max_turns=12):
    return loop.Agent(
        "coder", ScriptedClient(script, "coder"), Toolbox([NOOP]), "sys", max_turns=max_turns
    )


def fly(script, budget=10_000, max_turns=12):
    journal = MemoryJournal()
    result = loop.run(
        agent(script, max_turns), "task", Session(journal, "r-1"), Budget(budget), task_id="T1"
    )
    return result, journal, [r.event for r in journal.read("run-r-1")]


def replays(journal, script, budget=10_000, max_turns=12):
    recorded = [r.event for r in journal.read("run-r-1")]
    again = Session(MemoryJournal(), "r-1", recorded=recorded, replay=True)
    loop.run(agent(script, max_turns), "task", again, Budget(budget), task_id="T1")
    return again.cursor == len(recorded)


def test_the_vocabulary_is_seed_02s():
    assert STATUSES[:10] == (
        "PENDING",
        "RUNNING",
        "WAITING_EVIDENCE",
        "WAITING_AUTHORITY",
        "WAITING_DEPENDENCY",
        "VERIFYING",
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "RECONCILIATION_REQUIRED",
    )
    assert {"NO_SAFE_COORDINATION_PATH", "HUMAN_REQUIRED"} <= set(STATUSES)
    assert structured("blocked") == "WAITING_DEPENDENCY"
    assert structured("NO_SAFE_PATH") == "NO_SAFE_COORDINATION_PATH"
    assert structured("RUNNING") is None  # a last word is said when the run is over


@pytest.mark.parametrize(
    "script, budget, max_turns, status, source",
    [
        ([call("done", 5, summary="fixed")], 10_000, 12, "COMPLETED", "harness"),
        ([call("noop", 5_000)], 1_000, 12, "CANCELLED", "harness"),
        ([call("noop", 1)] * 3, 10_000, 2, "FAILED", "harness"),
        ([say("hm", 1), say("hm", 1)], 10_000, 12, "FAILED", "harness"),
        (
            [call("done", 5, summary="need the logs", status="WAITING_EVIDENCE")],
            10_000,
            12,
            "WAITING_EVIDENCE",
            "agent",
        ),
        (
            [call("done", 5, summary="-", status="NO_SAFE_PATH")],
            10_000,
            12,
            "NO_SAFE_COORDINATION_PATH",
            "agent",
        ),
    ],
    ids=["done", "budget", "turn-cap", "drift", "waiting", "no-safe-path"],
)
def test_every_run_ends_with_one_structured_status(script, budget, max_turns, status, source):
    _, journal, events = fly(script, budget, max_turns)
    last = events[-1]
    assert isinstance(last, StatusReported)
    assert (last.status, last.source, last.agent, last.task_id) == (status, source, "coder", "T1")
    assert not any(isinstance(e, StatusNormalised) for e in events)
    assert replays(journal, script, budget, max_turns)


def test_a_status_outside_the_vocabulary_is_normalised_not_trusted_and_found():
    script = [call("done", 5, summary="all good", status="mostly fine, trust me")]
    _, journal, events = fly(script)
    normalised, reported = events[-2:]
    assert isinstance(normalised, StatusNormalised)
    assert normalised.said == "mostly fine, trust me" and normalised.status == "COMPLETED"
    assert "not trusted" in normalised.reason
    assert (reported.status, reported.source, reported.said) == (
        "COMPLETED",
        "harness",
        "mostly fine, trust me",
    )
    [found] = diagnose(journal.read_all())
    assert found["kind"] == "unknown_status" and found["said"] == "mostly fine, trust me"
    assert replays(journal, script)


def test_an_unknown_status_is_found_in_a_journal_written_before_statuses():
    old = AgentFinished(run_id="r-1", agent="coder", result={"status": "yolo", "summary": "-"})
    records = [Recorded("run-r-1", 1, 1, old)]
    [found] = diagnose(records)
    assert (found["kind"], found["said"], found["status"]) == (
        "unknown_status",
        "yolo",
        "COMPLETED",
    )
    ok = AgentFinished(run_id="r-1", agent="coder", result={"status": "ok"})
    assert diagnose([Recorded("run-r-1", 1, 1, ok)]) == []  # an alias is a known word
