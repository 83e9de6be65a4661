"""A reviewer present but silent misses its reply deadline, measured in turns and seconds from
the journal, and takes the absent reviewer's path: re-asked once, then escalated."""

from __future__ import annotations

import time

import pytest

from runtime import flight
from runtime.diagnose import diagnose
from runtime.events import DeadlinePassed, MessageSent, ReplyOverdue, TaskEscalated
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.model import ModelClient, ModelResponse, ScriptedClient, call
from runtime.session import Session
from runtime.team import Services
from teams import TEAMS

pytestmark = pytest.mark.slow


def harness_path(events):
    """What the harness did about the reviewer: its requests, deadlines and the escalation."""
    out = []
    for e in events:
        if isinstance(e, MessageSent) and e.recipient == "reviewer":
            out.append(("REQUEST", e.message_id))
        elif isinstance(e, DeadlinePassed):
            out.append(("DeadlinePassed", e.request, e.attempt))
        elif isinstance(e, TaskEscalated):
            out.append(("TaskEscalated", e.cause, e.attempts))
    return out


def test_a_reviewer_that_keeps_reading_misses_its_deadline_and_is_escalated(fly_team):
    flown = fly_team("silent-reviewer")
    assert flown.outcome.status == "escalated"
    overdue = [e for e in flown.events if isinstance(e, ReplyOverdue)]
    assert [(e.awaited, e.turns, e.max_turns, e.task_id) for e in overdue] == [
        ("reviewer", 4, 4, "T1"),
        ("reviewer", 4, 4, "T1"),
    ]
    requests = [e for e in flown.events if isinstance(e, MessageSent) and e.recipient == "reviewer"]
    assert [e.request for e in overdue] == [r.message_id for r in requests]
    passed = [e for e in flown.events if isinstance(e, DeadlinePassed)]
    assert all(
        "reviewer gave no report (overdue): reviewer took 4 turns" in e.reason for e in passed
    )
    # the present reviewer takes the absent one's path, step for step
    absent = fly_team("silent-dropout")
    assert [s[0] for s in harness_path(flown.events)] == [s[0] for s in harness_path(absent.events)]
    assert harness_path(flown.events)[-1] == ("TaskEscalated", "no_reply", 2)
    assert "Integrated" not in flown.kinds()

    [found] = diagnose(flown.records)
    assert (found["kind"], found["agents"]) == ("missed_deadline", ["reviewer"])
    assert found["summary"].startswith("reviewer let the deadline of 2 requests on T1 pass")
    cited = {r.position for r in flown.records if isinstance(r.event, ReplyOverdue)}
    assert cited <= set(found["positions"])
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_the_deadline_is_found_on_journals_written_before_reply_overdue(fly_team):
    flown = fly_team("silent-reviewer")
    old = [r for r in flown.records if not isinstance(r.event, ReplyOverdue)]
    [found] = diagnose(old)
    assert found["kind"] == "missed_deadline" and "2 requests" in found["summary"]


class Dawdles(ModelClient):
    """A reviewer that answers every turn, slowly, and never with a verdict."""

    def complete(self, messages, tools) -> ModelResponse:
        time.sleep(1.2)
        return call("read_file", 20, path="slugkit/slug.py")


def test_a_slow_silent_reviewer_runs_out_of_seconds_by_the_journals_clock(tmp_path):
    run_id = "r-dawdle"
    # seconds enough for the coder's real test run, not for two of the reviewer's slow turns
    config = flight.plan("repo-fix", "silent-reviewer", run_id, reply_seconds=2.0)
    team = TEAMS["repo-fix"]
    scripts = team.scenarios["silent-reviewer"].scripts
    clients = {a: ScriptedClient(scripts[a], a) for a in scripts}
    clients["reviewer"] = Dawdles()
    journal = MemoryJournal()
    finished = team.fly(Session(journal, run_id), config, clients, tmp_path, Services())
    assert finished.status == "escalated"
    events = [r.event for r in journal.read(f"run-{run_id}")]
    overdue = [e for e in events if isinstance(e, ReplyOverdue)]
    assert [e.awaited for e in overdue] == ["reviewer", "reviewer"]
    for e in overdue:
        assert e.max_seconds == 2.0 and e.turns < e.max_turns == 4  # the clock, not the turns
        assert e.elapsed > 2.0 and "no reply within 2 s" in e.reason
        sent = next(m for m in events if isinstance(m, MessageSent) and m.message_id == e.request)
        last = events[events.index(e) - 1]
        assert e.elapsed == round(last.t - sent.t, 3)  # both ends are journalled times


def test_a_replay_long_after_a_reply_deadline_does_not_time_anybody_out(tmp_path):
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("repo-fix", "first-flight", "r-in-time", reply_seconds=4.0)
    assert flight.fly(journal, config, "r-in-time", tmp_path).status == "done"
    time.sleep(4.1)  # every deadline has passed: a replay reads the record, not the clock
    assert flight.replay(journal, "r-in-time").identical
    assert not [r for r in journal.read("run-r-in-time") if isinstance(r.event, ReplyOverdue)]
