"""Breakers say what tripped: the spend breaker's refusal is not the worker's, collateral work
answers from its cache, and the loop breaker stops an agent repeating the same call."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.diagnose import diagnose
from runtime.events import (
    AnswerComposed,
    BreakerTripped,
    RecoveryRouted,
    SubtaskDegraded,
    ToolDispatched,
    WorkerReported,
)
from runtime.jsonl import JsonlJournal
from teams.triage.plan import KB, POLICY

pytestmark = pytest.mark.slow


def run_events(flown):
    return [r.event for r in JsonlJournal(flown.path).read(f"run-{flown.run_id}")]


def test_a_spend_breaker_refusal_is_labelled_the_breakers_and_collateral_falls_back(fly_team):
    flown = fly_team("runaway-spend", team="support-triage")
    run = run_events(flown)
    [tripped] = [e for e in run if isinstance(e, BreakerTripped) and e.breaker.startswith("spend:")]
    assert tripped.reason == "spend rate"
    kb = next(e.report for e in run if isinstance(e, WorkerReported) and e.task_id == "S2")
    assert kb["reason"] == "breaker" and "the spend breaker stopped kb-worker" in kb["degraded"]
    [answer] = [e for e in run if isinstance(e, AnswerComposed)]
    assert "refused the task" not in answer.text and "refused the task" not in flown.outcome.reason
    assert (
        f"kb-worker escalated: the spend breaker stopped kb-worker: breaker {tripped.breaker}"
        in (answer.degraded)
    )
    # the policy specialist, stopped by the same breaker or by its own server, is not escalated:
    # it answers from its cached snapshot
    policy = [e for e in run if isinstance(e, RecoveryRouted) and e.worker_id == POLICY]
    assert [e.action["action"] for e in policy] == ["fallback"]
    assert "policy snapshot 2025-05" in answer.text
    degraded = {e.task_id: e for e in run if isinstance(e, SubtaskDegraded)}
    assert degraded["S3"].fallback and degraded["S2"].fallback is None
    kinds = {
        f["kind"] for f in diagnose(flight.run_records(JsonlJournal(flown.path), flown.run_id))
    }
    assert "degraded_subtask" in kinds
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_an_agent_repeating_the_same_call_is_stopped_by_the_loop_breaker(fly_team):
    flown = fly_team("looping-agent", team="support-triage")
    journal = JsonlJournal(flown.path)
    records = flight.run_records(journal, flown.run_id)
    kb_stream = [r.event for r in records if r.stream.endswith(f"-S2-{KB}")]
    searches = [e for e in kb_stream if isinstance(e, ToolDispatched)]
    assert len(searches) == 2  # the third identical call was not run
    [tripped] = [e for e in kb_stream if isinstance(e, BreakerTripped)]
    assert tripped.breaker == f"loop:{KB}" and tripped.rates == {"repeats": 3.0}
    assert tripped.reason == "kb.search called 3 times in a row with the same arguments"
    assert kb_stream[-2] == tripped  # its run ended there, and its last word says so
    assert (kb_stream[-1].kind, kb_stream[-1].status) == ("StatusReported", "FAILED")

    run = run_events(flown)
    kb = next(e.report for e in run if isinstance(e, WorkerReported) and e.task_id == "S2")
    assert (kb["status"], kb["reason"]) == ("failed", "breaker")
    [routed] = [e for e in run if isinstance(e, RecoveryRouted) and e.worker_id == KB]
    assert routed.action["action"] == "escalate" and "loop breaker" in routed.action["reason"]
    assert flown.outcome.status == "done"
    assert "kb-worker escalated: the loop breaker stopped kb-worker" in flown.outcome.reason

    found = {f["kind"]: f for f in diagnose(records)}
    # The policy tool's failures trip its breaker too (breaker_tripped); the loop breaker's
    # trip is told by looping_agent alone.
    assert set(found) == {"looping_agent", "degraded_subtask", "breaker_tripped"}
    assert found["breaker_tripped"]["breaker"] == "tools:policy"
    loop = found["looping_agent"]
    assert loop["agents"] == [KB] and loop["tool"] == "kb.search"
    assert {r.position for r in records if isinstance(r.event, BreakerTripped)} & set(
        loop["positions"]
    )
    assert flight.replay(journal, flown.run_id).identical


def test_a_loop_is_found_in_a_journal_written_before_the_loop_breaker(fly_team):
    flown = fly_team("runaway-spend", team="support-triage")  # any run: add a loop to it
    records = flight.run_records(JsonlJournal(flown.path), flown.run_id)
    base = records[-1].position
    from runtime.journal import Recorded

    looped = [
        Recorded(
            position=base + n,
            stream=f"worker-{flown.run_id}-S9-{KB}",
            version=n,
            event=ToolDispatched(
                run_id=flown.run_id, agent=KB, tool="kb.search", call_id=f"c{n}", args={"q": "x"}
            ),
        )
        for n in range(1, 5)
    ]
    found = [f for f in diagnose([*records, *looped]) if f["kind"] == "looping_agent"]
    assert len(found) == 1 and "called kb.search 4 times in a row" in found[0]["summary"]
