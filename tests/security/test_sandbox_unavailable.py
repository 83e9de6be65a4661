"""Where bubblewrap is missing, agent code does not run: the tool call fails with an
observation that says bubblewrap is required and how to install it or opt out; never a quiet
run without the sandbox. An operator's opt-out does not reach runs started in the sandbox."""

from __future__ import annotations

from runtime import flight
from runtime.diagnose import diagnose
from runtime.events import SuiteChecked
from runtime.journal import Recorded
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


def test_a_bubblewrap_that_cannot_start_is_named_in_a_finding_even_when_it_says_nothing(tmp_path):
    """Installed but refused by the kernel (a container's default profile), bubblewrap may
    print nothing: the reason read "cannot start a sandbox here: ;", and the verdict "the
    suite is not green (0 failing)", with no word of the sandbox outside the events."""
    outcome, events = flight_on(tmp_path, Sandbox(bwrap="/bin/false"))
    [suite] = [e for e in events if e.kind == "SuiteChecked"]
    assert "cannot start a sandbox here: it exited with status 1 and said nothing" in suite.trace
    records = JsonlJournal(tmp_path / "run.jsonl").read("run-r-nobwrap")
    [found] = [f for f in diagnose(records) if f["kind"] == "suite_not_run"]
    assert found["summary"].startswith("the harness could not run the suite, so no test passed")
    assert "bubblewrap (/bin/false) cannot start a sandbox here" in found["summary"]
    assert outcome.status != "done"


def test_a_suite_check_that_ran_drops_the_finding():
    def checked(position, **fields):
        return Recorded("run-r", position, position, SuiteChecked(**fields))

    records = [
        checked(1, passed=0, failed=0, ok=False, trace="SandboxUnavailable: no"),
        checked(2, passed=3, failed=1, ok=False, trace="1 failed"),
    ]
    assert [f["kind"] for f in diagnose(records[:1])] == ["suite_not_run"]
    assert diagnose(records) == []  # it ran: the failing test is the story now


def test_an_opt_out_does_not_reach_a_run_started_in_the_sandbox(tmp_path):
    opted_out = Sandbox(required=False, bwrap="/nonexistent/bin/bwrap")
    _, events = flight_on(tmp_path, opted_out)  # the run's settings say: sandboxed
    runs = [e for e in events if e.kind == "ToolReturned" and e.tool == "run_tests"]
    assert runs and all(e.error and e.error.type == "SandboxUnavailable" for e in runs)
