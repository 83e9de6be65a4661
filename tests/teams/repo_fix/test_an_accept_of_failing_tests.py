"""A reviewer's ACCEPT does not merge a candidate whose own tests fail: the mutation gate reads
the test evidence the harness attached to the review, refuses the merge at `evidence`, and the
coder gets another round (counted toward the cap) with the gate's reason. The reviewer's
mistake is a finding all the same; a journal from before the gate read the tests replays its
merge as written, and shows the same finding, as merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime import flight, plugins
from runtime.diagnose import diagnose
from runtime.jsonl import JsonlJournal
from runtime.model import call
from runtime.team import Scenario
from teams.repo_fix import scenarios

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "journals"
BEFORE = FIXTURES / "rubber-stamp.before-red-gate.jsonl"
BEFORE_RUN = "r-rubber-stamp-before-red-gate"


def of(events, kind):
    return [e for e in events if e.kind == kind]


def test_the_reviewer_accepts_failing_tests_and_the_gate_sends_the_candidate_back(fly_team):
    flown = fly_team("rubber-stamp")
    events = flown.events
    first, second = of(events, "CandidateCommitted")
    tests = [e.payload["tests"] for e in of(events, "MessageSent") if e.performative == "accept"]
    assert [(t["passed"], t["failed"]) for t in tests] == [(1, 1), (2, 0)]

    # The first candidate, accepted on 1 failed: refused at evidence, never merged.
    reason = f"the tests submitted with commit {first.commit[:12]} fail (1 failed, 1 passed)"
    [refused] = of(events, "MutationRefused")
    assert (refused.check, refused.capability, refused.task_id) == ("evidence", "integrate", "T1")
    assert refused.reason == reason
    [said] = of(events, "IntegrationRefused")
    assert (said.task_id, said.reason) == ("T1", reason)
    [integrated] = of(events, "Integrated")
    assert integrated.branch == second.branch and integrated.commit != first.commit
    assert not of(events, "TaskEscalated")

    # The coder's second round carries the gate's reason, not the reviewer's praise.
    requests = [
        e.payload
        for e in of(events, "MessageSent")
        if e.performative == "request" and e.recipient == "coder"
    ]
    assert requests[1]["rejected"] == reason and requests[1]["round"] == 2
    assert flown.messages() == [
        ("REQUEST", "operator", "orchestrator"),
        ("REQUEST", "orchestrator", "coder"),
        ("DONE", "coder", "orchestrator"),
        ("REQUEST", "orchestrator", "reviewer"),
        ("ACCEPT", "reviewer", "orchestrator"),
        ("REQUEST", "orchestrator", "coder"),
        ("DONE", "coder", "orchestrator"),
        ("REQUEST", "orchestrator", "reviewer"),
        ("ACCEPT", "reviewer", "orchestrator"),
        ("REQUEST", "orchestrator", "tester"),
        ("DONE", "tester", "orchestrator"),
    ]
    second_accept = [e for e in of(events, "MessageSent") if e.performative == "accept"][1]
    assert integrated.approval == second_accept.message_id
    assert flown.outcome.status == "done"

    # The reviewer's mistake is a finding although the gate held.
    [found] = diagnose(flown.records)
    accept_at = next(
        r.position
        for r in flown.records
        if r.event.kind == "MessageSent" and r.event.performative == "accept"
    )
    refused_at = next(r.position for r in flown.records if r.event.kind == "IntegrationRefused")
    assert found == {
        "kind": "accepted_failing_tests",
        "summary": f"reviewer accepted T1's commit {first.commit[:12]} though its tests fail "
        "(1 failed, 1 passed); the merge was refused",
        "positions": [accept_at, refused_at],
        "task_id": "T1",
        "agents": ["reviewer"],
        "commit": first.commit,
        "failed": 1,
        "passed": 1,
        "outcome": "refused",
    }
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_accepts_of_failing_tests_count_toward_the_round_cap(monkeypatch, fly_team):
    stamp = scenarios.RUBBER_STAMP
    coder = stamp.scripts["coder"]
    always = Scenario(
        name="stamp-every-round",
        description="The coder never mends its failing test; the reviewer accepts every round.",
        task=stamp.task,
        settings={**stamp.settings, "max_rounds": 2},
        scripts={
            **stamp.scripts,
            "coder": [*coder[:4], call("run_tests", 60), call("done", 40, summary="as it is")],
            "reviewer": [*stamp.scripts["reviewer"][:2], stamp.scripts["reviewer"][1]],
        },
    )
    monkeypatch.setitem(plugins.teams()["repo-fix"].scenarios, always.name, always)
    flown = fly_team(always.name)
    events = flown.events
    assert not of(events, "Integrated")
    assert [e.check for e in of(events, "MutationRefused")] == ["evidence", "evidence"]
    assert len(of(events, "IntegrationRefused")) == 2
    [escalated] = of(events, "TaskEscalated")
    assert (escalated.cause, escalated.attempts) == ("reject_cap", 2)
    assert escalated.reason == (
        "T1 went back to its coder 2 times (the cap is 2): 2 of them the reviewer accepted it "
        "with failing tests, which the mutation gate refused"
    )
    assert flown.outcome.status == "escalated"
    found = diagnose(flown.records)
    assert [f["kind"] for f in found].count("accepted_failing_tests") == 2
    assert {f["outcome"] for f in found if f["kind"] == "accepted_failing_tests"} == {"refused"}
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_a_journal_from_before_the_gate_read_the_tests_replays_its_merge_on_red():
    journal = JsonlJournal(BEFORE)
    records = journal.read(f"run-{BEFORE_RUN}")
    events = [r.event for r in records]
    # As it was recorded: merged on the ACCEPT of failing tests, caught only by the suite check.
    assert not of(events, "MutationRefused") and not of(events, "IntegrationRefused")
    [accept] = [e for e in of(events, "MessageSent") if e.performative == "accept"]
    assert (accept.payload["tests"]["passed"], accept.payload["tests"]["failed"]) == (1, 1)
    [integrated] = of(events, "Integrated")
    assert integrated.approval == accept.message_id
    [finished] = of(events, "TeamFinished")
    assert finished.status == "failed"
    # The record decides: the gate's refusal is not made up on replay.
    report = flight.replay(journal, BEFORE_RUN)
    assert report.identical, report.difference
    assert report.complete and report.events == len(records)
    # The reviewer's mistake is found in the old journal too, as merged.
    [found] = diagnose(records)
    assert found["kind"] == "accepted_failing_tests" and found["outcome"] == "merged"
    assert found["summary"].endswith("(1 failed, 1 passed); it was merged all the same")
