"""A test can rewrite pytest's JUnit report as the run ends (the report lives in the scratch
directory the sandbox lets agent code write). The harness reads the report against pytest's
exit status, which the test cannot rewrite after the fact: a report of "all passed" from a run
that exited 1 is refused, and so is a report of failures from one that exited 0. A forger that
also fakes the exit status still cannot drop the template's tests from the suite check (one
that names them too is beyond what the harness checks: runtime/pytest_runs.py)."""

from __future__ import annotations

from runtime import workspace
from teams.repos import suite_check
from tests.security.sandboxing import fresh_workspace, needs_bwrap, tool

pytestmark = needs_bwrap

FORGE = """\
import atexit
import sys

REPORT = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml="))


def forge():
    cases = '<testcase classname="tests.test_x" name="test_ok"/>' * 42
    with open(REPORT, "w") as f:
        f.write(f'<testsuites><testsuite name="pytest">{{cases}}</testsuite></testsuites>')
{then}

atexit.register(forge)
"""
# atexit runs after pytest wrote its report and before the process ends.
REWRITE_ONLY = FORGE.format(then="")
REWRITE_AND_EXIT_0 = FORGE.format(then="    import os\n\n    os._exit(0)")
EXIT_0_ONLY = "import atexit\nimport os\n\natexit.register(lambda: os._exit(0))\n"


def test_a_report_rewritten_to_all_passed_after_a_failing_run_is_refused(tmp_path):
    _, root = fresh_workspace(tmp_path)
    tool(root, "write_file", path="tests/test_zz_forge.py", content=REWRITE_ONLY)
    observation = tool(root, "run_tests")
    assert "result" not in observation  # not {"passed": 42, "failed": 0}
    assert observation["error"]["type"] == "ReportContradicted"
    assert "pytest exited 1 (some test failed)" in observation["error"]["message"]


def test_a_failing_report_from_a_run_that_exited_0_is_refused(tmp_path):
    _, root = fresh_workspace(tmp_path)
    tool(root, "write_file", path="tests/test_zz_exit.py", content=EXIT_0_ONLY)
    observation = tool(root, "run_tests")
    assert observation["error"]["type"] == "ReportContradicted"
    message = observation["error"]["message"]
    assert "pytest exited 0 (all passed), but its report shows 1 failing" in message


def test_the_suite_check_wants_the_templates_tests_even_from_a_forger_that_fakes_both(
    tmp_path,
):
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_zz_forge.py").write_text(REWRITE_AND_EXIT_0)
    # In-process code can lie about both: run_tests believes it (the limit of what the harness
    # can check from outside) ...
    assert tool(root, "run_tests")["result"] == {"passed": 42, "failed": 0}
    # ... but committed, it still cannot make the suite check green without naming the
    # template's tests, and the reviewer had the forging file in the diff.
    workspace.git(root, "add", "-A")
    workspace.git(root, "commit", "-q", "-m", "forge")
    suite = suite_check(root, commit="main", template="parse-empty")
    assert (suite["passed"], suite["failed"], suite["ok"]) == (42, 2, False)
    assert "test_empty_input_has_no_fields (not run)" in suite["trace"]


def test_a_forged_report_fails_the_suite_check_without_counting_as_a_run(tmp_path):
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_zz_forge.py").write_text(REWRITE_ONLY)
    suite = suite_check(root)
    assert (suite["passed"], suite["failed"], suite["ok"]) == (0, 0, False)
    assert "its report shows no failing test" in suite["trace"]
