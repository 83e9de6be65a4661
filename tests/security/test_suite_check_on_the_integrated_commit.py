"""The harness's suite check, which decides a run's verdict, runs on the integrated commit alone:
a clean copy of it, removed afterwards. What an agent left in the working tree unreviewed (a
tester's conftest.py that reports every test passed) has no say, and what the tests write
there touches nothing that stays."""

from __future__ import annotations

from runtime import workspace
from runtime.jsonl import JsonlJournal
from runtime.model import ScriptedClient, call
from runtime.session import Session
from runtime.team import FlightConfig
from teams.repo_fix import flight as repo_fix
from teams.repo_fix.scenarios import accept, green, plan
from teams.repo_fix.settings import RepoFixSettings
from teams.repos import known_tests, suite_check
from tests.security.sandboxing import files_under, fresh_workspace, needs_bwrap

pytestmark = needs_bwrap

PASS_EVERYTHING = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    rep.outcome = "passed"
"""
FAILING = "tests/test_parser.py::test_empty_input_has_no_fields"


def test_a_testers_unreviewed_conftest_does_not_make_the_verdict_done(tmp_path):
    # The hostile review's run: a no-op fix, accepted; the tester writes a conftest that
    # turns every report into "passed" and says green. (The coder runs no test: a red run
    # shown to the reviewer would not be merged however it accepted.)
    scripts = {
        "orchestrator": [plan(50, fix="Fix the parser.", verify="Verify T1.")],
        "coder": [call("done", 20, summary="done")],
        "reviewer": [accept(20, "fine")],
        "tester": [
            call("write_file", 40, path="tests/conftest.py", content=PASS_EVERYTHING),
            call("run_tests", 40),
            green(20, "all green"),
        ],
    }
    config = FlightConfig(
        scenario="first-flight",
        task="Make the failing parser test pass.",
        workspace="r-forge.workspace",
        settings=RepoFixSettings(template="parse-empty"),
    )
    session = Session(JsonlJournal(tmp_path / "r-forge.jsonl"), "r-forge")
    clients = {name: ScriptedClient(script, name) for name, script in scripts.items()}
    finished = repo_fix.fly(session, config, clients, tmp_path / "workspaces")
    tester_saw = [e for e in session.emitted if e.kind == "ToolReturned" and e.agent == "tester"]
    assert tester_saw[-1].result == {"passed": 2, "failed": 0}  # the conftest works, live
    suite = next(e for e in session.emitted if e.kind == "SuiteChecked")
    assert (suite.passed, suite.failed, suite.ok) == (1, 1, False)
    assert FAILING.split("::")[1] in suite.trace
    assert finished.status == "failed"
    assert finished.reason == "integrated, but the suite is not green (1 failing)"


def committed(root, files, message="agent's work"):
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    workspace.git(root, "add", "-A")
    workspace.git(root, "commit", "-q", "-m", message)
    return workspace.git(root, "rev-parse", "HEAD")


GUARDED = (
    "def parse(line):\n    if not line:\n        return []\n"
    "    return [field.strip() for field in line.split(',')]\n"
)
VANDAL = """\
import pathlib


def test_rewrites_the_product():
    pathlib.Path("textparse/parser.py").write_text("def parse(line):\\n    return 'vandal'\\n")
    pathlib.Path("textparse/backdoor.py").write_text("OPEN = True\\n")
"""


def test_what_the_checked_tests_write_touches_nothing_that_stays(tmp_path):
    _, root = fresh_workspace(tmp_path)
    committed(root, {"textparse/parser.py": GUARDED, "tests/test_vandal.py": VANDAL})
    before = files_under(root)
    suite = suite_check(root, commit="main", template="parse-empty")
    assert suite["ok"] and suite["passed"] == 3
    assert files_under(root) == before
    assert workspace.git(root, "status", "--porcelain") == ""


def test_only_the_commit_counts_not_the_working_tree_beside_it(tmp_path):
    _, root = fresh_workspace(tmp_path)
    # The fix lies in the working tree, uncommitted: main still fails.
    (root / "textparse" / "parser.py").write_text(GUARDED)
    (root / "tests" / "conftest.py").write_text(PASS_EVERYTHING)
    suite = suite_check(root, commit="main")
    assert (suite["passed"], suite["failed"], suite["ok"]) == (1, 1, False)
    # Committed, the fix counts, and the uncommitted conftest still does not.
    (root / "tests" / "conftest.py").unlink()
    committed(root, {})
    (root / "tests" / "conftest.py").write_text(PASS_EVERYTHING.replace("passed", "failed"))
    suite = suite_check(root, commit="main")
    assert (suite["passed"], suite["failed"], suite["ok"]) == (2, 0, True)


def test_without_a_commit_it_checks_the_working_tree_as_a_commit_would_take_it(tmp_path):
    # The solo team's check: no commit, the coder's working tree is its work. Ignored files
    # are not part of it, and what the tests write still goes away with the copy.
    _, root = fresh_workspace(tmp_path)
    (root / "textparse" / "parser.py").write_text(GUARDED)
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "test_ignored.py").write_text("def test_x():\n    assert False\n")
    (root / "tests" / "test_vandal.py").write_text(VANDAL)
    before = files_under(root)
    suite = suite_check(root, template="parse-empty")
    assert (suite["passed"], suite["failed"], suite["ok"]) == (3, 0, True)
    assert files_under(root) == before


def test_the_templates_tests_run_as_shipped_however_the_work_changed_them(tmp_path):
    _, root = fresh_workspace(tmp_path)
    test_file = root / "tests" / "test_parser.py"
    shipped = test_file.read_text()
    # The failing test skipped rather than fixed, or its assertion made true: each runs as
    # the template wrote it, and fails.
    skipped = "import pytest\n\n" + shipped.replace(
        "def test_empty", "@pytest.mark.skip\ndef test_empty"
    )
    weakened = shipped.replace("assert ", "assert True or ")
    assert weakened != shipped
    for changed in (skipped, weakened):
        committed(root, {"tests/test_parser.py": changed})
        suite = suite_check(root, commit="main", template="parse-empty")
        assert (suite["passed"], suite["failed"], suite["ok"]) == (1, 1, False)
        assert "test_empty_input_has_no_fields" in suite["trace"]
    # ... or the file taken out, or put behind a link, or the directory made a file.
    workspace.git(root, "rm", "-q", "tests/test_parser.py")
    workspace.git(root, "commit", "-q", "-m", "no test")
    suite = suite_check(root, commit="main", template="parse-empty")
    assert (suite["passed"], suite["failed"]) == (1, 1)
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_parser.py").symlink_to("/dev/null")
    committed(root, {})
    suite = suite_check(root, commit="main", template="parse-empty")
    assert (suite["passed"], suite["failed"]) == (1, 1)
    workspace.git(root, "rm", "-q", "-r", "tests")
    committed(root, {"tests": "not a directory\n"})
    suite = suite_check(root, commit="main", template="parse-empty")
    assert (suite["passed"], suite["failed"]) == (1, 1)
    assert (root / "tests").read_text() == "not a directory\n"  # only the copy was mended


DESELECT = """\
def pytest_collection_modifyitems(config, items):
    items[:] = [i for i in items if "empty" not in i.name]
"""


def test_the_templates_tests_must_pass_by_name(tmp_path):
    # A conftest the template does not ship stays (the work may need one), so it can leave
    # the failing test out of the run: every test that ran passed, and the check says which
    # of the template's did not run.
    _, root = fresh_workspace(tmp_path)
    committed(root, {"tests/conftest.py": DESELECT})
    suite = suite_check(root, commit="main", template="parse-empty")
    assert (suite["passed"], suite["failed"], suite["ok"]) == (1, 1, False)
    assert f"did not pass: {FAILING} (not run)" in suite["trace"]
    # Without the template, only what ran counts: green.
    assert suite_check(root, commit="main")["ok"]


def test_a_committed_export_ignore_leaves_no_test_out(tmp_path):
    _, root = fresh_workspace(tmp_path)
    committed(root, {".gitattributes": "tests/test_parser.py export-ignore\n"})
    suite = suite_check(root, commit="main")
    assert (suite["passed"], suite["failed"]) == (1, 1)


def test_the_shipped_templates_tests_are_known_by_name():
    assert known_tests("parse-empty") == [
        "tests/test_parser.py::test_fields_are_trimmed",
        FAILING,
    ]
    assert len(known_tests("parse-and-slug")) == 4


def test_a_runner_killed_once_is_run_once_more_in_the_same_copy(tmp_path):
    # parse-flaky's conftest kills the first run in a fresh checkout, and the copy is fresh.
    _, root = fresh_workspace(tmp_path, "parse-flaky")
    committed(root, {"textparse/parser.py": GUARDED})
    suite = suite_check(root, commit="main", template="parse-flaky")
    assert (suite["passed"], suite["failed"], suite["ok"]) == (2, 0, True)
    assert not (root / ".runner-warmed-up").exists()  # the runs' mark went with the copy


def test_a_runner_killed_every_time_is_not_green(tmp_path):
    _, root = fresh_workspace(tmp_path)
    killer = "import os, signal\n\n\ndef pytest_configure(config):\n"
    committed(root, {"conftest.py": killer + "    os.kill(os.getpid(), signal.SIGKILL)\n"})
    suite = suite_check(root, commit="main")
    assert (suite["passed"], suite["failed"], suite["ok"]) == (0, 0, False)
    assert suite["trace"].startswith("pytest exited 137")
