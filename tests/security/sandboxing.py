"""Shared pieces of the sandbox and workspace attacks: real workspaces, real tool calls, real
bubblewrap, and journals whose settings point somewhere they should not."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from runtime import flight, workspace
from runtime.events import TeamStarted
from runtime.jsonl import JsonlJournal
from runtime.model import ToolCall
from runtime.sandbox import Sandbox
from runtime.team import workspace_name
from runtime.tools import Toolbox, execute
from teams.repos import template as shipped

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="bubblewrap is not available here (apt-get install bubblewrap)",
)
MISSING_BWRAP = Sandbox(bwrap="/nonexistent/bin/bwrap")


def fresh_workspace(tmp_path: Path, template: str = "parse-empty") -> tuple[Path, Path]:
    """(the workspaces root, a run's workspace prepared in it)."""
    workspaces = tmp_path / "workspaces"
    root = workspaces / "r-attack.workspace"
    workspace.prepare(root, shipped(template), workspaces)
    return workspaces, root


def tool(
    root: Path, name: str, writable: Any = None, sandbox: Sandbox = workspace.REQUIRED, **args: Any
) -> dict[str, Any]:
    """The observation an agent gets from one tool call in `root`."""
    box = Toolbox(workspace.toolset(root, writable, sandbox=sandbox))
    checked = box.check(ToolCall(id="c", name=name, args=args), "agent")
    return execute(checked, args).observation()


def files_under(path: Path) -> dict[str, bytes]:
    """Every file under `path` and its content: compared before and after, "nothing touched"."""
    if not path.exists():
        return {}
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(path).parts
    }


def victim(path: Path) -> Path:
    """A directory somebody else owns, with a file in it."""
    path.mkdir(parents=True)
    (path / "precious.txt").write_text("not yours\n")
    return path


def journal_with(path: Path, run_id: str, **changes: Any) -> JsonlJournal:
    """A JSONL journal holding one run's TeamStarted, planned as usual, then edited by hand
    (a change to a setting of the team's own goes into `config.settings`)."""
    config = flight.plan("repo-fix", "first-flight", "r-template").model_dump(mode="json")
    config.update({"workspace": workspace_name(run_id)})
    for name, value in changes.items():
        (config if name in config else config["settings"])[name] = value
    journal = JsonlJournal(path)
    started = TeamStarted(
        run_id=run_id, team="repo-fix", scenario="first-flight", task="t", config=config
    )
    journal.append(f"run-{run_id}", [started], 0)
    return journal
