"""A specialist that lies: it reports `ok` on findings that cite its own failed calls. The
harness, not the worker, decides the sub-task is DEGRADED, and the answer names the question."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.diagnose import diagnose
from runtime.events import AnswerComposed, FindingUnsupported, SubtaskDegraded, WorkerReported
from runtime.jsonl import JsonlJournal
from teams.triage.plan import POLICY

pytestmark = pytest.mark.slow


def test_a_specialist_reporting_ok_on_failed_calls_makes_the_answer_degraded(fly_team):
    flown = fly_team("liar", team="support-triage")
    journal = JsonlJournal(flown.path)
    run = [r.event for r in journal.read(f"run-{flown.run_id}")]
    [said] = [e.report for e in run if isinstance(e, WorkerReported) and e.task_id == "S3"]
    assert said["status"] == "ok" and said["degraded"] is None  # the worker claims success
    dropped = [e for e in run if isinstance(e, FindingUnsupported) and e.worker_id == POLICY]
    assert [e.reason for e in dropped] == ["call_failed", "call_failed"]

    [degraded] = [e for e in run if isinstance(e, SubtaskDegraded)]
    assert (degraded.task_id, degraded.worker_id, degraded.fallback) == ("S3", POLICY, None)
    assert "refund policy" in degraded.why and "2 call_failed" in degraded.why
    [answer] = [e for e in run if isinstance(e, AnswerComposed)]
    assert answer.text.startswith("DEGRADED:") and "policy-worker on S3" in answer.degraded
    assert "within the refund policy" not in answer.text.split("\n", 1)[1]
    assert flown.outcome.status == "done"
    assert "answered, DEGRADED" in flown.outcome.reason and "S3" in flown.outcome.reason

    findings = diagnose(flight.run_records(journal, flown.run_id))
    # The policy tool's failures also trip its breaker: a finding of its own.
    assert {f["kind"] for f in findings} == {"degraded_subtask", "breaker_tripped"}
    [found] = [f for f in findings if f["kind"] == "degraded_subtask"]
    assert found["kind"] == "degraded_subtask" and found["task_id"] == "S3"
    assert found["agents"] == [POLICY]
    assert flight.replay(journal, flown.run_id).identical


def test_the_lie_is_diagnosed_on_a_journal_written_before_subtask_degraded_existed(fly_team):
    flown = fly_team("liar", team="support-triage")
    records = flight.run_records(JsonlJournal(flown.path), flown.run_id)
    old = [r for r in records if not isinstance(r.event, SubtaskDegraded)]
    [found] = [f for f in diagnose(old) if f["kind"] == "degraded_subtask"]
    assert found["kind"] == "degraded_subtask" and found["task_id"] == "S3"
    assert "2 of its findings unsupported (call_failed)" in found["summary"]
