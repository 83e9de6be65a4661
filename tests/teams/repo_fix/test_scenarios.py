"""Every repo-fix scenario flown end to end: a real workspace, real git, real pytest runs.

The outcome of each is what the harness decides; the diagnosis of each names exactly its own
failure signature; and each replays identical from its journal alone.
"""

from __future__ import annotations

import pytest

from runtime import flight, views
from runtime.diagnose import diagnose
from runtime.jsonl import JsonlJournal
from runtime.workspace import git

pytestmark = pytest.mark.slow

EXPECTED = {
    "first-flight": ("done", set()),
    "vague-subtask": ("done", {"duplicate_work"}),
    "silent-dropout": ("escalated", {"unanswered_request", "missed_deadline"}),
    "silent-reviewer": ("escalated", {"missed_deadline"}),
    "premature-done": ("done", {"done_without_evidence"}),
    "flaky-tool": ("done", {"transient_error_absorbed"}),
    "budget-starved": ("halted", {"budget_exhausted"}),
    "reject-loop": ("escalated", {"reject_cap_reached"}),
    "rubber-stamp": ("done", {"accepted_failing_tests"}),
}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_each_scenario_ends_as_the_harness_decides_and_diagnoses_as_itself(fly_team, scenario):
    flown = fly_team(scenario)
    status, signatures = EXPECTED[scenario]
    assert flown.outcome.status == status
    findings = diagnose(flown.records)
    assert {f["kind"] for f in findings} == signatures
    for f in findings:
        cited = {r.position: r.event.kind for r in flown.records}
        assert all(p in cited for p in f["positions"])


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_each_scenario_replays_identical_and_bills_what_the_ledger_debited(fly_team, scenario):
    flown = fly_team(scenario)
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical
    bill = views.bill(flown.records)
    debited = sum(e.amount for e in flown.events if e.kind == "BudgetDebited")
    assert bill["total"]["tokens"] == bill["spent"] == debited and bill["balanced"]
    assert sum(row["tokens"] for row in bill["agents"].values()) == debited
    assert sum(row["tokens"] for row in bill["tasks"].values()) == debited
    ledgers = bill["ledgers"]
    assert ledgers["run"]["spent"] == debited
    assert sum(v["spent"] for k, v in ledgers.items() if k != "run") == debited


def test_the_first_flight_follows_the_protocol_and_really_merges(fly_team):
    flown = fly_team("first-flight")
    assert flown.messages() == [
        ("REQUEST", "operator", "orchestrator"),
        ("REQUEST", "orchestrator", "coder"),
        ("DONE", "coder", "orchestrator"),
        ("REQUEST", "orchestrator", "reviewer"),
        ("ACCEPT", "reviewer", "orchestrator"),
        ("REQUEST", "orchestrator", "tester"),
        ("DONE", "tester", "orchestrator"),
    ]
    coder_tests = [
        e.result
        for e in flown.events
        if e.kind == "ToolReturned" and e.agent == "coder" and e.tool == "run_tests"
    ]
    assert [(r["passed"], r["failed"]) for r in coder_tests] == [(1, 1), (2, 0)]
    integrated = next(e for e in flown.events if e.kind == "Integrated")
    accept = next(e for e in flown.events if e.kind == "MessageSent" and e.performative == "accept")
    assert integrated.approval == accept.message_id and integrated.approved_by == "reviewer"
    assert (
        git(flown.workspace / "..", "-C", str(flown.workspace), "rev-parse", "main")
        == integrated.commit
    )
    parents = git(flown.workspace, "log", "-1", "--format=%P", integrated.commit).split()
    assert len(parents) == 2  # a real merge of the candidate branch
    suite = next(e for e in flown.events if e.kind == "SuiteChecked")
    assert suite.ok and (suite.passed, suite.failed) == (2, 0)


def test_the_reviewer_sees_the_diff_and_test_output_only(fly_team):
    flown = fly_team("first-flight")
    request = next(e for e in flown.events if e.kind == "MessageSent" and e.recipient == "reviewer")
    assert set(request.payload) == {"commit", "diff", "tests"}
    assert "+    if not line.strip():" in request.payload["diff"]
    assert request.payload["tests"] == {"passed": 2, "failed": 0}


def test_the_coders_done_carries_evidence_from_the_journal_not_its_claim(fly_team):
    flown = fly_team("premature-done")
    dones = [
        e
        for e in flown.events
        if e.kind == "MessageSent" and e.performative == "done" and e.sender == "coder"
    ]
    assert [d.payload["tests"] for d in dones] == [None, {"passed": 2, "failed": 0}]
    kinds = flown.kinds()
    # the gate refused the first candidate, and merged only after the evidence came
    refused = [e for e in flown.events if e.kind == "IntegrationRefused"]
    assert len(refused) == 1 and flown.events.index(refused[0]) < flown.events.index(dones[1])
    assert kinds.index("Integrated") > flown.events.index(dones[1])
    rejects = [e for e in flown.events if e.kind == "MessageSent" and e.performative == "reject"]
    assert len(rejects) == 1
    back = [e for e in flown.events if e.kind == "MessageSent" and e.recipient == "coder"]
    assert back[1].payload["rejected"] == rejects[0].payload["reasons"]


def test_a_silent_reviewer_gets_one_reissue_then_the_task_is_escalated(fly_team):
    flown = fly_team("silent-dropout")
    requests = [e for e in flown.events if e.kind == "MessageSent" and e.recipient == "reviewer"]
    deadlines = [e for e in flown.events if e.kind == "DeadlinePassed"]
    assert len(requests) == 2 and [d.attempt for d in deadlines] == [1, 2]
    assert [d.request for d in deadlines] == [r.message_id for r in requests]
    escalated = next(e for e in flown.events if e.kind == "TaskEscalated")
    assert escalated.cause == "no_reply" and escalated.attempts == 2
    assert "Integrated" not in flown.kinds() and "SuiteChecked" not in flown.kinds()


def test_a_flaky_runner_is_retried_by_the_loop_before_the_model_sees_it(fly_team):
    flown = fly_team("flaky-tool")
    first = [e for e in flown.events if e.kind == "ToolReturned" and e.tool == "run_tests"][:2]
    assert first[0].error.type == "ToolExit" and "exited 137" in first[0].error.message
    assert first[1].attempt == 2 and first[1].error is None
    assert first[0].call_id == first[1].call_id


def test_a_starved_budget_halts_the_coder_and_leaves_the_rest_standing(fly_team):
    flown = fly_team("budget-starved")
    exhausted = next(e for e in flown.events if e.kind == "BudgetExhausted")
    assert exhausted.agent == "coder"
    ledgers = views.bill(flown.records)["ledgers"]
    assert ledgers["coder"]["remaining"] <= 0 < ledgers["run"]["remaining"]
    assert "reviewer" not in {e.agent for e in flown.events if e.kind == "RunStarted"}


def test_the_reject_loop_is_bounded_by_its_round_cap(fly_team):
    flown = fly_team("reject-loop")
    rejects = [e for e in flown.events if e.kind == "MessageSent" and e.performative == "reject"]
    assert len(rejects) == 2
    escalated = next(e for e in flown.events if e.kind == "TaskEscalated")
    assert escalated.cause == "reject_cap" and "Integrated" not in flown.kinds()
    assert flown.kinds().count("IntegrationRefused") == 2  # the gate refused each round, end to end
    assert "integrate" not in git(flown.workspace, "log", "--format=%s", "main")


def test_the_vague_subtask_shows_two_agents_on_one_file(fly_team):
    flown = fly_team("vague-subtask")
    [finding] = diagnose(flown.records)
    assert finding["artefact"] == "tests/test_parser.py"
    assert finding["agents"] == ["coder", "tester"]
    assert finding["prevented"]  # the work registry refused the tester's write


def test_contract_net_bidding_awards_the_lowest_bid(fly_team):
    flown = fly_team("first-flight", bidding=True)
    assert flown.outcome.status == "done"
    messages = flown.messages()
    assert ("PROPOSE", "coder-a", "orchestrator") in messages
    assert ("PROPOSE", "coder-b", "orchestrator") in messages
    assert ("ACCEPT", "orchestrator", "coder-b") in messages
    assert ("REJECT", "orchestrator", "coder-a") in messages
    assert ("DONE", "coder-b", "orchestrator") in messages
    proposals = {
        e.sender: e.payload["bid"]
        for e in flown.events
        if e.kind == "MessageSent" and e.performative == "propose"
    }
    assert proposals == {"coder-a": 900, "coder-b": 700}
    bill = views.bill(flown.records)["agents"]
    assert (bill["coder-a"]["tokens"], bill["coder-a"]["calls"]) == (25, 1)
    assert diagnose(flown.records) == []
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_the_docs_agent_records_the_change_and_does_not_gate_shipping(fly_team):
    flown = fly_team("first-flight", docs=True)
    assert flown.outcome.status == "done"
    assert (flown.workspace / "docs" / "changelog.md").read_text().startswith("# Changelog")
    kinds = flown.kinds()
    assert kinds.index("SuiteChecked") < max(i for i, k in enumerate(kinds) if k == "RunStarted")
    planned = next(e for e in flown.events if e.kind == "TeamPlanned")
    assert planned.amended == ["added T4: this run has a docs agent"]
