"""A limit of the sandbox not enforced where agent code ran is a finding, once per run: every
run_tests answer of such a host says it (`not_enforced`), where an agent reads it and an
operator did not, and the findings (the run page's, `python -m runtime diagnose`'s) said
nothing of it."""

from __future__ import annotations

import json

from runtime.cli import main
from runtime.diagnose import diagnose
from runtime.events import TeamStarted, ToolReturned
from runtime.journal import Recorded
from runtime.jsonl import JsonlJournal
from runtime.sandbox import NO_PROCESS_LIMIT
from runtime.signatures.limits import PROCESSES

R = {"run_id": "r-1", "agent": "coder"}


def answered(*results: dict) -> list[ToolReturned]:
    return [
        ToolReturned(**R, tool="run_tests", call_id=f"c{i}", result=result)
        for i, result in enumerate(results)
    ]


def records(events) -> list[Recorded]:
    return [Recorded("run-r-1", i + 1, i + 1, e) for i, e in enumerate(events)]


def test_runs_of_tests_that_say_the_process_limit_unenforced_are_one_finding_saying_what_to_do():
    events = answered(
        {"passed": 3, "failed": 0, "not_enforced": NO_PROCESS_LIMIT},
        {"passed": 2, "failed": 1},  # a host with a pids group: nothing said
        {"passed": 3, "failed": 0, "not_enforced": NO_PROCESS_LIMIT},
    )
    found = diagnose(records(events))
    assert found == [
        {
            "kind": "limit_not_enforced",
            "summary": PROCESSES,
            "positions": [1, 3],
            "said": NO_PROCESS_LIMIT,
        }
    ]
    assert found[0]["summary"].startswith(
        "the process limit was not enforced on this host (no pids cgroup; the worker runs as root)"
    )
    assert "a user other than root" in PROCESSES and "delegated cgroup" in PROCESSES


def test_answers_that_say_nothing_unenforced_are_no_finding():
    events = [
        *answered({"passed": 1, "failed": 0}, {"passed": 0, "failed": 0, "not_enforced": ""}),
        ToolReturned(**R, tool="read_file", call_id="c9", result="not_enforced"),
        ToolReturned(**R, tool="run_tests", call_id="c8", result=None),
    ]
    assert [f["kind"] for f in diagnose(records(events))] == []


def test_a_limit_the_finding_does_not_know_is_said_as_the_run_said_it():
    note = "the  memory limit is\nnot enforced here"
    [found] = diagnose(records(answered({"passed": 1, "failed": 0, "not_enforced": note})))
    assert found["summary"] == (
        "a limit of the sandbox was not enforced on this host: the memory limit is not "
        "enforced here"
    )


def test_the_command_line_diagnosis_says_it_once(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    journal = JsonlJournal(path)
    unbounded = {"passed": 1, "failed": 0, "not_enforced": NO_PROCESS_LIMIT}
    events = [
        TeamStarted(run_id="r-1", team="repo-fix", scenario="first-flight", task="t"),
        *answered(unbounded, unbounded),
    ]
    journal.append("run-r-1", events, 0)
    assert main(["diagnose", str(path)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(f["kind"], f["summary"]) for f in found] == [("limit_not_enforced", PROCESSES)]
