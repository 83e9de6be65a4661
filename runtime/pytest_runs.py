"""One pytest run of agent code, and what the harness believes of its report.

pytest runs in the sandbox (runtime/sandbox.py) and writes its JUnit report to the run's scratch
directory, which the code under test can write too: a test can rewrite the report at exit. No
check from outside the process can make an in-process liar honest, so the harness makes the lie
harder and visible instead:

- the report must agree with pytest's exit status, which the harness reads from the process
  itself: 1 is "some test failed", 0 "all passed"; a report that says otherwise was not written
  by the run as it ended (`ReportContradicted`), and the run counts for nothing. A forger must
  now end the process with a false status as well as write the file;
- the harness's suite check (teams/repos) puts the template's tests back as shipped before it
  runs them, and asks for each of them by name to have passed (`not_passed`): work that
  edits, skips, deselects or deletes the test the task is about does not pass it.

What no check from outside stops: code of the commit's own that writes a report naming every
test as passed and ends the process with status 0. It is in the diff the reviewer reads.

A nonce in the report (a `junit_suite_name` of the harness's choosing) was considered and left
out: it would reach the process in its argv, beside the report's path the forger already reads
there, so it would stop no forger that the exit status does not.
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runtime import agent_files
from runtime import sandbox as sandboxing
from runtime.agent_files import read_regular
from runtime.sandbox import Sandbox
from runtime.tools import ToolExit, ToolFailure

MAX_TRACE = 4_000
MAX_REPORT = 16 << 20  # pytest's JUnit report, as big as a suite of thousands of failures
PASSED, FAILED = 0, 1  # pytest's exit statuses for "all passed" and "some test failed"
_TIMING = re.compile(r"\b\d+(\.\d+)?s\b")


class ReportContradicted(ToolFailure):
    """pytest's report and its exit status disagree: the report is no evidence."""


@dataclass(frozen=True)
class Case:
    """One <testcase> of the report: pytest's classname and name, and how it came out."""

    classname: str
    name: str
    outcome: str  # "passed", "failed" (a failure or an error) or "skipped"
    trace: str = ""


def run(root: Path, targets: list[str], timeout: float, sandbox: Sandbox) -> list[Case]:
    """Run pytest on `targets` (the whole suite if none) in `root` as agent code; the cases of
    its report, once the report is known to agree with how pytest exited.

    pytest's own report and temporary files go to a scratch directory of this run; the targets
    come after `--`, so they can only ever be paths.
    """
    with agent_files.scratch("minutes-pytest-") as scratch:
        report = scratch / "report.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--tb=short",
            "-p",
            "no:cacheprovider",
            f"--rootdir={root}",
            f"--junitxml={report}",
            f"--basetemp={scratch / 'basetemp'}",
            "--",
            *targets,
        ]
        done = sandboxing.run(
            command,
            workspace=root,
            scratch=scratch,
            timeout=timeout,
            sandbox=sandbox,
            label="pytest",
        )
        if done.code not in (PASSED, FAILED) or not report.exists():
            raise ToolExit("pytest", done.code, _TIMING.sub("", scrub(done.output, root)))
        cases = read_report(report)
    failing = sum(c.outcome == "failed" for c in cases)
    if done.code == FAILED and not failing:
        raise ReportContradicted(
            "pytest exited 1 (some test failed), but its report shows no failing test: the "
            "report was rewritten after the tests ran (by the code under test?), so this run "
            "counts for nothing"
        )
    if done.code == PASSED and failing:
        raise ReportContradicted(
            f"pytest exited 0 (all passed), but its report shows {failing} failing: the report "
            "or the exit status was forged (by the code under test?), so this run counts for "
            "nothing"
        )
    return cases


def read_report(report: Path) -> list[Case]:
    # The scratch directory is agent code's to write: the report is read only as a file.
    tree = ET.ElementTree(ET.fromstring(read_regular(report, MAX_REPORT, "pytest's report")))
    cases = []
    for case in tree.iter("testcase"):
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        classname, name = case.get("classname") or "", case.get("name") or ""
        if bad is not None:
            trace = f"{classname}::{name}\n{bad.text or bad.get('message') or ''}".strip()
            cases.append(Case(classname, name, "failed", trace))
        elif case.find("skipped") is not None:
            cases.append(Case(classname, name, "skipped"))
        else:
            cases.append(Case(classname, name, "passed"))
    return cases


def counts(cases: list[Case], root: Path) -> dict[str, Any]:
    """What an agent's run_tests answers: passed and failed (errors count as failed), skipped
    if any, the failures' traces with the workspace's path taken out, and a limit of the
    sandbox's not enforced on this host if one is not."""
    passed = sum(c.outcome == "passed" for c in cases)
    failed = sum(c.outcome == "failed" for c in cases)
    skipped = sum(c.outcome == "skipped" for c in cases)
    result: dict[str, Any] = {"passed": passed, "failed": failed}
    if skipped:
        result["skipped"] = skipped
    traces = [c.trace for c in cases if c.outcome == "failed"]
    if traces:
        result["trace"] = scrub("\n\n".join(traces), root)[:MAX_TRACE]
    if sandboxing.unenforced():
        # Said where the agent and the operator read the run: a limit not applied is not one.
        result["not_enforced"] = sandboxing.unenforced()
    return result


def failures(result: Any) -> int:
    """How many tests a run_tests result (`counts`' dict, as an agent's ToolReturned or a
    message's `tests` holds it) shows failing: `failed`, which counts errors too, and an
    `errors` count should a result name them apart. 0 for a result with none, and for anything
    that is no result (None: no test run at all)."""
    if not isinstance(result, dict):
        return 0
    found = (result.get(name) for name in ("failed", "errors"))
    return sum(n for n in found if isinstance(n, int) and not isinstance(n, bool) and n > 0)


def junit_address(nodeid: str) -> tuple[str, str]:
    """The (classname, name) pytest's JUnit report gives the test `nodeid`
    (`tests/test_a.py::TestB::test_c` -> `tests.test_a.TestB`, `test_c`)."""
    path, *names = nodeid.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    return ".".join([module, *names[:-1]]), names[-1]


def not_passed(cases: list[Case], nodeids: list[str]) -> dict[str, str]:
    """Which of the tests `nodeids` the report does not show as passed, and why ("not run", or
    its outcomes other than passed): every case of it (each parameter of a parametrized test)
    must have passed, and there must be one."""
    missing = {}
    for nodeid in nodeids:
        classname, name = junit_address(nodeid)
        mine = [
            c
            for c in cases
            if c.classname == classname and (c.name == name or c.name.startswith(name + "["))
        ]
        outcomes = sorted({c.outcome for c in mine} - {"passed"})
        if not mine or outcomes:
            missing[nodeid] = ", ".join(outcomes) if mine else "not run"
    return missing


def scrub(text: str, root: Path) -> str:
    """Take the workspace's own path out of pytest's output."""
    return text.replace(str(root) + os.sep, "").replace(str(root), ".")
