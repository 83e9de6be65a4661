"""Where bubblewrap is missing, agent code does not run: the tool call fails with an
observation that says bubblewrap is required and how to install it or opt out; never a quiet
run without the sandbox. An operator's opt-out does not reach runs started in the sandbox."""

from __future__ import annotations

from runtime import flight
from runtime.jsonl import JsonlJournal
from runtime.sandbox import Sandbox
from runtime.team import Services
from tests.security.sandboxing import MISSING_BWRAP, fresh_workspace, tool

MARKER = "import pathlib\n\n\ndef test_ran():\n    pathlib.Path('ran.txt').write_text('x')\n"


def test_without_bubblewrap_a_test_run_is_refused_and_says_how_to_fix_it(tmp_path):
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_marker.py").write_text(MARKER)
    observation = tool(root, "run_tests", sandbox=MISSING_BWRAP)
    assert observation["error"]["type"] == "SandboxUnavailable"
    message = observation["error"]["message"]
    assert "bubblewrap is required" in message and "/nonexistent/bin/bwrap" in message
    assert "apt-get install bubblewrap" in message and "MINUTES_SANDBOX=off" in message
    assert not (root / "ran.txt").exists()


def flight_on(tmp_path, sandbox: Sandbox, **settings):
    journal = JsonlJournal(tmp_path / "run.jsonl")
    config = flight.plan("solo", "solo-fix", "r-nobwrap", **settings)
    outcome = flight.fly(
        journal, config, "r-nobwrap", tmp_path / "workspaces", services=Services(sandbox=sandbox)
    )
    return outcome, [r.event for r in journal.read("run-r-nobwrap")]


def test_a_flight_on_a_host_without_bubblewrap_runs_no_agent_code_and_is_not_done(tmp_path):
    outcome, events = flight_on(tmp_path, MISSING_BWRAP)
    runs = [e for e in events if e.kind == "ToolReturned" and e.tool == "run_tests"]
    assert runs and all(e.error and e.error.type == "SandboxUnavailable" for e in runs)
    [suite] = [e for e in events if e.kind == "SuiteChecked"]
    assert not suite.ok and "bubblewrap is required" in suite.trace
    assert outcome.status != "done"


def test_an_opt_out_does_not_reach_a_run_started_in_the_sandbox(tmp_path):
    opted_out = Sandbox(required=False, bwrap="/nonexistent/bin/bwrap")
    _, events = flight_on(tmp_path, opted_out)  # the run's settings say: sandboxed
    runs = [e for e in events if e.kind == "ToolReturned" and e.tool == "run_tests"]
    assert runs and all(e.error and e.error.type == "SandboxUnavailable" for e in runs)
