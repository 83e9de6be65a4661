"""The views and the diagnosis over team journals, ours and the reference runtime's."""

from __future__ import annotations

import json

import pytest

from runtime import views
from runtime.diagnose import diagnose
from runtime.jsonl import JsonlJournal

pytestmark = pytest.mark.slow


def test_the_resume_point_of_the_first_flight_cut_after_each_message(fly_team):
    records = fly_team("first-flight").records
    stages = []
    for i, rec in enumerate(records):
        if rec.event.kind == "MessageSent":
            e = rec.event
            point = views.resume_point(records[: i + 1])
            assert point["position"] == rec.position
            stages.append((e.performative.upper(), e.sender, point["stage"]))
    assert stages == [
        ("REQUEST", "operator", "plan"),
        ("REQUEST", "orchestrator", "fix"),
        ("DONE", "coder", "review"),
        ("REQUEST", "orchestrator", "review"),
        ("ACCEPT", "reviewer", "verify"),
        ("REQUEST", "orchestrator", "verify"),
        ("DONE", "tester", "verify"),
    ]
    assert views.resume_point(records)["stage"] == "complete"


def test_the_audit_shows_each_verdict_with_its_evidence_and_the_approval_integration_relied_on(
    fly_team,
):
    records = fly_team("premature-done").records
    audit = views.audit(records)
    verdicts = [a for a in audit if a["what"] in ("ACCEPT", "REJECT")]
    assert [(a["what"], a["evidence"]["tests"]) for a in verdicts] == [
        ("REJECT", None),
        ("ACCEPT", {"passed": 2, "failed": 0}),
    ]
    [integration] = [a for a in audit if a["what"] == "Integrated"]
    assert integration["approval_position"] == verdicts[1]["position"]


def test_the_threads_group_messages_by_task_in_order(fly_team):
    threads = views.threads(fly_team("first-flight").records)
    assert [m["performative"] for m in threads["T1"]] == ["REQUEST", "DONE", "REQUEST", "ACCEPT"]
    assert all(m["delivered"] for ms in threads.values() for m in ms)


def reference(tmp_path, name, lines):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return JsonlJournal(path).read("run-imported")


def msg(sender, recipient, task, performative):
    return [
        {
            "kind": "MessageSent",
            "sender": sender,
            "recipient": recipient,
            "task_id": task,
            "performative": performative,
        },
        {"kind": "MessageDelivered", "recipient": recipient, "task_id": task},
    ]


def ran_tests(agent, passed, failed):
    return [
        {"kind": "ToolDispatched", "agent": agent, "tool": "run_tests"},
        {
            "kind": "ToolReturned",
            "agent": agent,
            "tool": "run_tests",
            "result": {"passed": passed, "failed": failed},
        },
    ]


FIRST_FLIGHT = [
    *msg("orchestrator", "coder", "T1", "request"),
    {"kind": "RunStarted", "agent": "coder", "task": "Make the failing parser test pass."},
    {"kind": "ModelResponded", "agent": "coder", "usage": 120},
    *ran_tests("coder", 1, 1),
    {"kind": "ModelResponded", "agent": "coder", "usage": 95},
    *ran_tests("coder", 2, 0),
    {"kind": "ModelResponded", "agent": "coder", "usage": 60},
    {"kind": "AgentFinished", "agent": "coder"},
    *msg("coder", "orchestrator", "T1", "done"),
    {"kind": "RunStarted", "agent": "reviewer", "task": "review"},
    {"kind": "ModelResponded", "agent": "reviewer", "usage": 40},
    {"kind": "AgentFinished", "agent": "reviewer"},
    *msg("reviewer", "orchestrator", "T1", "accept"),
    {"kind": "RunStarted", "agent": "tester", "task": "verify"},
    {"kind": "ModelResponded", "agent": "tester", "usage": 90},
    *ran_tests("tester", 2, 0),
    {"kind": "ModelResponded", "agent": "tester", "usage": 30},
    {"kind": "AgentFinished", "agent": "tester"},
]

CRASHES = {
    "duplicate_work": [
        {"kind": "ToolDispatched", "agent": "coder", "tool": "edit_file"},
        {
            "kind": "ToolReturned",
            "agent": "coder",
            "tool": "edit_file",
            "result": {"edited": "parser.py"},
        },
        {"kind": "ToolDispatched", "agent": "tester", "tool": "edit_file"},
        {
            "kind": "ToolReturned",
            "agent": "tester",
            "tool": "edit_file",
            "result": {"edited": "parser.py"},
        },
    ],
    "unanswered_request": msg("orchestrator", "reviewer", "T2", "request"),
    "done_without_evidence": [
        {
            "kind": "MessageSent",
            "sender": "orchestrator",
            "recipient": "coder",
            "task_id": "T1",
            "performative": "request",
        },
        {"kind": "AgentFinished", "agent": "coder"},
        {
            "kind": "MessageSent",
            "sender": "coder",
            "recipient": "orchestrator",
            "task_id": "T1",
            "performative": "done",
        },
        {"kind": "AgentFinished", "agent": "reviewer"},
        {
            "kind": "MessageSent",
            "sender": "reviewer",
            "recipient": "orchestrator",
            "task_id": "T1",
            "performative": "reject",
        },
    ],
    "transient_error_absorbed": [
        {
            "kind": "ToolReturned",
            "agent": "coder",
            "tool": "run_tests",
            "error": "RuntimeError: runner exited 137",
        },
        {
            "kind": "ToolReturned",
            "agent": "coder",
            "tool": "run_tests",
            "result": {"passed": 2, "failed": 0},
        },
    ],
}


def test_the_reference_first_flight_bills_without_a_ledger_and_diagnoses_clean(tmp_path):
    records = reference(tmp_path, "first", FIRST_FLIGHT)
    bill = views.bill(records)
    assert {a: r["tokens"] for a, r in bill["agents"].items()} == {
        "coder": 275,
        "reviewer": 40,
        "tester": 120,
    }
    assert bill["spent"] == 435 and bill["balanced"]
    assert diagnose(records) == []
    assert views.resume_point(records)["stage"] == "verify"
    assert [m["performative"] for m in views.threads(records)["T1"]] == [
        "REQUEST",
        "DONE",
        "ACCEPT",
    ]


@pytest.mark.parametrize("signature", sorted(CRASHES))
def test_each_reference_crash_yields_exactly_its_own_finding(tmp_path, signature):
    records = reference(tmp_path, signature, CRASHES[signature])
    assert [f["kind"] for f in diagnose(records)] == [signature]


@pytest.mark.parametrize(
    "cut, stage",
    [("done", "review"), ("accept", "verify")],
)
def test_the_reference_resume_point_after_the_done_and_after_the_accept(tmp_path, cut, stage):
    end = next(i for i, line in enumerate(FIRST_FLIGHT) if line.get("performative") == cut)
    records = reference(tmp_path, cut, FIRST_FLIGHT[: end + 1])
    assert views.resume_point(records)["stage"] == stage


@pytest.mark.parametrize(
    "scenario", ["first-flight", "silent-dropout", "premature-done", "flaky-tool", "vague-subtask"]
)
def test_every_fold_survives_its_state_going_through_json_after_every_event(fly_team, scenario):
    from runtime import folds
    from runtime.views import ALL, STORED

    records = fly_team(scenario).records
    for fold in {f.name: f for f in (*ALL, *STORED)}.values():
        state, rows = fold.start(), folds.Rows()
        for rec in records:
            if fold.kinds is None or rec.event.kind in fold.kinds:
                fold.step(state, rec, rows)
            state = json.loads(json.dumps(state))
        assert fold.result(state, rows) == folds.run(fold, records), fold.name
