"""Git repositories the coding teams work on: the shipped templates and the suite check.

Shared by `teams.solo` and `teams.repo_fix` (a team never imports another team). A template
is a small Python project with a failing test, under `templates/<name>/`; a run's workspace is
made from one by `runtime.workspace.prepare`. May import `runtime` only.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from runtime import pytest_runs, workspace
from runtime.sandbox import Sandbox
from runtime.tools import ToolExit, ToolFailure

LIBRARY = Path(__file__).parent / "templates"


def templates() -> list[str]:
    """The names of the shipped templates."""
    return sorted(p.name for p in LIBRARY.iterdir() if p.is_dir())


def shipped(name: str) -> str:
    """A template's name, or ValueError when no such template ships (a name that climbs out
    of the library is not one)."""
    if name not in templates():
        raise ValueError(f"unknown template {name!r}; known: {', '.join(templates())}")
    return name


def template(name: str) -> Path:
    """The directory of a shipped template."""
    return workspace.under(LIBRARY, LIBRARY / shipped(name))


# A setting naming a shipped template (checked where settings come in: planning, resuming,
# replaying, importing).
Template = Annotated[str, AfterValidator(shipped)]


def known_tests(name: str) -> list[str]:
    """The tests the template `name` ships, as pytest node ids (`tests/test_a.py::test_b`, or
    `::TestC::test_d` for a method): read from its source, never by running it. The task is to
    make them pass, so the suite check wants each of them to have passed by name."""
    root = template(name)
    found = []
    for path in sorted(root.rglob("test_*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"))
        at = path.relative_to(root).as_posix()
        for node in module.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                found.append(f"{at}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                found += [
                    f"{at}::{node.name}::{f.name}"
                    for f in node.body
                    if isinstance(f, ast.FunctionDef) and f.name.startswith("test")
                ]
    return found


def suite_check(
    root: Path,
    sandbox: Sandbox = workspace.REQUIRED,
    commit: str | None = None,
    required: list[str] | tuple[str, ...] = (),
) -> dict[str, object]:
    """The harness's own run of the whole suite: the verdict never rests on an agent's word.

    It runs on a clean copy of the workspace's `commit` (with None, of the working tree as a
    commit would take it), never on the working tree itself: a file some agent left there
    uncommitted and unreviewed (a conftest.py that reports every test passed) counts for
    nothing, and what the tests write goes away with the copy. The tests are agent code all the
    same: they run in the sandbox. Each test of `required` (node ids) must be in the report as
    passed; one that is not counts as failing, named in the trace."""
    try:
        with workspace.checkout(root, commit) as clean:
            cases = _run(clean, sandbox)
    except ToolFailure as exc:
        return {"passed": 0, "failed": 0, "ok": False, "trace": str(exc)}
    result = pytest_runs.counts(cases, clean)
    missing = pytest_runs.not_passed(cases, list(required))
    # A failed one is counted already; a skipped one, or one not run, is counted here.
    failed = int(result["failed"]) + sum("failed" not in why for why in missing.values())
    trace = str(result.get("trace", ""))
    if missing:
        said = "; ".join(f"{nodeid} ({why})" for nodeid, why in missing.items())
        said = "tests the template ships did not pass: " + said
        trace = f"{said}\n\n{trace}".strip()[: pytest_runs.MAX_TRACE]
    return {
        "passed": result["passed"],
        "failed": failed,
        "ok": failed == 0 and result["passed"] > 0,
        "trace": trace,
    }


def _run(clean: Path, sandbox: Sandbox) -> list[pytest_runs.Case]:
    try:
        return pytest_runs.run(clean, [], workspace.PYTEST_TIMEOUT, sandbox)
    except ToolExit as exc:
        if exc.code < 128:
            raise
    # pytest was killed by a signal: a flaky runner, which the agents' loop retries for them
    # (the parse-flaky template kills the first run in a fresh checkout, and this checkout is
    # always fresh). Once more, in the same copy: only the commit's own code ran in it.
    return pytest_runs.run(clean, [], workspace.PYTEST_TIMEOUT, sandbox)
