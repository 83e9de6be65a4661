"""The zero-intelligence test: which guarantees come from the harness (they hold with agents
that do nothing) and which from the agents (they do not)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime import flight
from runtime.cli import main
from runtime.jsonl import JsonlJournal
from runtime.model import ChatMessage
from runtime.zero import RuleClient, ZIClient, cell, table

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "journals"


def request(tests) -> ChatMessage:
    payload = {"commit": "c0ffee", "diff": "", "tests": tests}
    return ChatMessage(
        role="user", content="[REQUEST from orchestrator on T1, m-4]\n" + json.dumps(payload)
    )


@pytest.mark.parametrize(
    ("tests", "verdict"),
    [
        ({"passed": 2, "failed": 0}, "accept"),
        ({"passed": 2, "failed": 1}, "reject"),
        ({"passed": 0, "failed": 0}, "reject"),
        (None, "reject"),
    ],
)
def test_the_rule_reviewer_accepts_exactly_passing_evidence(tests, verdict):
    answer = RuleClient().complete([request(tests)], [])
    [call] = answer.tool_calls
    assert (call.name, call.args["verdict"]) == ("done", verdict)
    assert answer.usage.total == 8


def test_a_zi_agent_says_its_roles_done_whatever_it_is_told():
    for agent, args in (
        ("coder-a", {"summary": "done"}),
        ("reviewer", {"verdict": "accept", "reasons": "looks fine"}),
    ):
        answer = ZIClient(agent).complete([request({"passed": 0, "failed": 9})], [])
        assert [(c.name, c.args) for c in answer.tool_calls] == [("done", args)]
        assert answer.usage.total == 5


def test_the_two_by_two_shows_what_the_harness_guarantees(tmp_path, capsys):
    assert main(["zi", "--team", "repo-fix", "--dir", str(tmp_path), "--json"]) == 0
    cells = {(c["coder"], c["reviewer"]): c for c in json.loads(capsys.readouterr().out)}
    assert list(cells) == [
        ("scripted", "scripted"),
        ("scripted", "rules"),
        ("zi", "scripted"),
        ("zi", "rules"),
    ]
    # Competent coder: shipped whoever reviews.
    for reviewer in ("rules", "scripted"):
        assert cells[("scripted", reviewer)]["status"] == "done"
        assert cells[("scripted", reviewer)]["suite"] == {"passed": 2, "failed": 0}
    # ZI coder, rule reviewer: nothing with test evidence, nothing accepted, nothing integrated.
    refused = cells[("zi", "rules")]
    assert (refused["status"], refused["accept"], refused["integrated"]) == ("escalated", False, 0)
    # ZI coder, scripted reviewer: its script accepts whatever it is sent, so an empty,
    # untested change is integrated; only the harness's own suite check calls the run failed.
    stamped = cells[("zi", "scripted")]
    assert (stamped["status"], stamped["accept"], stamped["integrated"]) == ("failed", True, 1)
    assert stamped["suite"]["failed"] > 0
    # What the harness guarantees held in every cell.
    assert all(c["every_integration_cites_an_accept"] for c in cells.values())
    assert all(c["no_integration_on_failing_tests"] for c in cells.values())
    assert all(c["suite_checked_by_harness"] for c in cells.values())
    for path in tmp_path.glob("zi-*.jsonl"):
        journal = JsonlJournal(path)
        assert flight.replay(journal, flight.find_run(journal, journal.streams())).identical
    assert (
        main(["zi", "--team", "repo-fix", "--dir", str(tmp_path)]) == 2
    )  # the journals are there: refused
    assert "exists: give another --dir" in capsys.readouterr().err


def test_a_cell_says_when_an_integration_cited_an_accept_of_failing_tests():
    # Written before the merge gate read the tests: the reviewer's ACCEPT of 1 failed merged.
    before = JsonlJournal(FIXTURES / "rubber-stamp.before-red-gate.jsonl")
    said = cell(before.read("run-r-rubber-stamp-before-red-gate"), "scripted", "scripted")
    assert (said["integrated"], said["every_integration_cites_an_accept"]) == (1, True)
    assert said["no_integration_on_failing_tests"] is False
    assert "  NO  no integration of a candidate whose own tests fail" in table([said])
