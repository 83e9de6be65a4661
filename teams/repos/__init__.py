"""Git repositories the coding teams work on: the shipped templates and the suite check.

Shared by `teams.solo` and `teams.repo_fix` (a team never imports another team). A template
is a small Python project with a failing test, under `templates/<name>/`; a run's workspace is
made from one by `runtime.workspace.prepare`. May import `runtime` only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from runtime import workspace
from runtime.sandbox import Sandbox
from runtime.tools import ToolFailure

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


def suite_check(root: Path, sandbox: Sandbox = workspace.REQUIRED) -> dict[str, object]:
    """The harness's own run of the whole suite: the verdict never rests on an agent's word.
    The tests are agent code all the same: they run in the sandbox."""
    try:
        result = workspace.pytest_run(root, sandbox=sandbox)
    except ToolFailure as exc:
        return {"passed": 0, "failed": 0, "ok": False, "trace": str(exc)}
    failed = int(result["failed"])
    return {
        "passed": result["passed"],
        "failed": failed,
        "ok": failed == 0 and result["passed"] > 0,
        "trace": result.get("trace", ""),
    }
