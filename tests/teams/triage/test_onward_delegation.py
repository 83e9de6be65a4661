"""A triage specialist hands a part of its sub-task on to another specialist: within the limits
it is handed off and run like any sub-task; back to an agent on its chain (a cycle) or past the
depth limit it is refused before it is sent, and the harness decides what the part comes to."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.diagnose import diagnose
from runtime.events import (
    AnswerComposed,
    DelegationRefused,
    SubtaskDegraded,
    WorkDelegated,
    WorkerHandedOff,
)
from runtime.jsonl import JsonlJournal
from teams.triage.onward import LEAD, TOOL
from teams.triage.plan import KB, ORDERS, RETURNS

pytestmark = pytest.mark.slow


def run_of(flown):
    journal = JsonlJournal(flown.path)
    return journal, [r.event for r in journal.read(f"run-{flown.run_id}")]


def kinds(journal, flown):
    return {f["kind"] for f in diagnose(flight.run_records(journal, flown.run_id))}


def test_a_part_handed_on_within_the_limit_is_run_as_a_sub_task_of_its_own(fly_team):
    flown = fly_team("onward-delegation", team="support-triage")
    journal, run = run_of(flown)
    given = [e for e in run if isinstance(e, WorkDelegated)]
    assert [(e.by, e.to, e.chain, e.depth) for e in given] == [
        (LEAD, KB, [LEAD], 1),
        (KB, RETURNS, [LEAD, KB], 2),
    ]
    assert given[1].parent == given[0].delegation_id
    handed = [e for e in run if isinstance(e, WorkerHandedOff)]
    assert [e.task_id for e in handed] == ["S1", "S2", "S3", "S2.1"]
    part = handed[-1].handoff
    assert part["worker_id"] == RETURNS and part["inputs"]["order_id"] == "B2001"
    assert part["allowed_tools"] == ["orders.lookup_order", TOOL]
    # checked before it was sent: the delegation precedes the hand-off
    assert run.index(given[1]) < run.index(handed[-1])
    [answer] = [e for e in run if isinstance(e, AnswerComposed)]
    assert "[orders.lookup_order returns-worker-1-1]" in answer.text
    assert not [e for e in run if isinstance(e, DelegationRefused)]
    assert flown.outcome.status == "done" and "S2.1" not in flown.outcome.reason
    assert kinds(journal, flown) == {"degraded_subtask", "breaker_tripped"}  # the policy server
    assert flight.replay(journal, flown.run_id).identical


def test_a_hand_back_to_the_delegator_is_refused_and_the_part_ends_degraded(fly_team):
    flown = fly_team("delegation-cycle", team="support-triage")
    journal, run = run_of(flown)
    [refused] = [e for e in run if isinstance(e, DelegationRefused)]
    assert (refused.by, refused.to, refused.rule) == (RETURNS, KB, "cycle")
    assert refused.chain == [LEAD, KB, RETURNS] and refused.task_id == "S2.1"
    # nothing was sent: no part of S2.1, and the knowledge-base specialist ran once
    assert [e.task_id for e in run if isinstance(e, WorkerHandedOff)] == ["S1", "S2", "S3", "S2.1"]
    assert len([e for e in run if isinstance(e, WorkDelegated)]) == 2
    # the harness, not the worker (which reported ok), decides the part is degraded
    [degraded] = [e for e in run if isinstance(e, SubtaskDegraded) and e.task_id == "S2.1"]
    assert degraded.worker_id == RETURNS and "has no verified finding" in degraded.why
    [answer] = [e for e in run if isinstance(e, AnswerComposed)]
    assert answer.text.startswith("DEGRADED:")
    assert "returns-worker on S2.1" in answer.degraded
    assert "its hand-on to kb-worker was refused (cycle)" in answer.degraded
    assert flown.outcome.status == "done" and "S2.1" in flown.outcome.reason
    findings = diagnose(flight.run_records(journal, flown.run_id))
    [cycle] = [f for f in findings if f["kind"] == "delegation_cycle"]
    assert "triage-lead → kb-worker → returns-worker → kb-worker" in cycle["summary"]
    assert cycle["task_id"] == "S2.1"
    assert flight.replay(journal, flown.run_id).identical


def test_a_hand_on_past_the_depth_limit_is_refused_and_the_specialist_keeps_the_part(fly_team):
    flown = fly_team("delegation-too-deep", team="support-triage")
    journal, run = run_of(flown)
    [refused] = [e for e in run if isinstance(e, DelegationRefused)]
    assert (refused.by, refused.to, refused.rule) == (RETURNS, ORDERS, "depth")
    assert (refused.depth, refused.limit) == (3, 2)
    assert [e.task_id for e in run if isinstance(e, WorkerHandedOff)] == ["S1", "S2", "S3", "S2.1"]
    # it did the part itself: a verified finding, so the part is not degraded
    assert not [e for e in run if isinstance(e, SubtaskDegraded) and e.task_id == "S2.1"]
    [answer] = [e for e in run if isinstance(e, AnswerComposed)]
    assert "[orders.lookup_order returns-worker-2-1]" in answer.text
    assert flown.outcome.status == "done"
    assert "delegation_too_deep" in kinds(journal, flown)
    assert flight.replay(journal, flown.run_id).identical
