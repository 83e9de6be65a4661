"""Git repositories the coding teams work on: the shipped templates and the suite check.

Shared by `teams.solo` and `teams.repo_fix` (a team never imports another team). A template
is a small Python project with a failing test, under `templates/<name>/`; a run's workspace is
made from one by `runtime.workspace.prepare`. May import `runtime` only.
"""

from __future__ import annotations

import ast
import shutil
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


# What of a template is its spec rather than its code: the tests, and pytest's settings and
# root conftest.py as shipped. The suite check puts these back before it runs (spec_of).
SPEC_FILES = ("pytest.ini", "conftest.py")
SPEC_DIRS = ("tests",)


def spec_of(name: str) -> dict[str, bytes]:
    """The template's spec files (SPEC_FILES, and every file under SPEC_DIRS) by path."""
    root = template(name)
    found = {f: (root / f).read_bytes() for f in SPEC_FILES if (root / f).is_file()}
    for directory in SPEC_DIRS:
        for path in sorted((root / directory).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def suite_check(
    root: Path,
    sandbox: Sandbox = workspace.REQUIRED,
    commit: str | None = None,
    template: str | None = None,
) -> dict[str, object]:
    """The harness's own run of the whole suite: the verdict never rests on an agent's word.

    It runs on a clean copy of the workspace's `commit` (with None, of the working tree as a
    commit would take it), never on the working tree itself: a file some agent left there
    uncommitted and unreviewed (a conftest.py that reports every test passed) counts for
    nothing, and what the tests write goes away with the copy. The tests are agent code all the
    same: they run in the sandbox.

    With `template`, the work was to make that template's tests pass, so they are its spec:
    its test files and pytest settings are put back in the copy as shipped (a test the work
    weakened, skipped or deleted runs as it was written), and each of its tests must be in the
    report as passed by name (one that is not counts as failing, named in the trace). What
    this cannot stop: code of the commit's own (a module, a conftest.py the template does not
    ship) that rewrites the report and ends pytest with status 0; the reviewer reads it in the
    diff (runtime/pytest_runs.py)."""
    spec = spec_of(template) if template else {}
    required = known_tests(template) if template else []
    try:
        with workspace.checkout(root, commit) as clean:
            for path, content in spec.items():
                put(clean, path, content)
            cases = _run(clean, sandbox)
    except ToolFailure as exc:
        return {"passed": 0, "failed": 0, "ok": False, "trace": str(exc)}
    result = pytest_runs.counts(cases, clean)
    missing = pytest_runs.not_passed(cases, required)
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


def put(clean: Path, path: str, content: bytes) -> None:
    """Write a spec file into the copy, through no link: a link, a file or a directory the
    commit put where the file or one of its directories belongs is taken out first."""
    here = clean
    parts = path.split("/")
    for i, part in enumerate(parts):
        here = here / part
        last = i == len(parts) - 1
        if here.is_symlink() or (here.exists() and (here.is_dir() == last)):
            if here.is_dir() and not here.is_symlink():
                shutil.rmtree(here)
            else:
                here.unlink()
        if not last and not here.exists():
            here.mkdir()
    here.write_bytes(content)


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
