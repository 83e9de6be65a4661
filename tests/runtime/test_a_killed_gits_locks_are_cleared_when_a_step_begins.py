"""A git killed with its worker leaves its lock files; the next step clears those older than
itself before its first live work, and keeps a lock made since (a lapsed driver's git)."""

from __future__ import annotations

import os
import time

import pytest

from runtime import flight, git_run, workspace
from runtime.journal import MemoryJournal
from runtime.session import Session
from runtime.warm import WarmFlight
from teams.repos import template
from tests.runtime.helpers import facts

HOUR = 3600


def left_by_a_killed_git(path, ago=HOUR):
    """A lock file as a git killed `ago` seconds before leaves it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    then = time.time() - ago
    os.utime(path, (then, then))


def test_locks_older_than_the_step_are_removed_and_newer_ones_kept(tmp_path):
    root = tmp_path / "w"
    workspace.prepare(root, template("parse-empty"))
    workspace.add_worktree(root, "coder-a")
    dot = root / ".git"
    [entry] = (dot / "worktrees").iterdir()
    stale = [
        "index.lock",
        "HEAD.lock",
        "refs/heads/main.lock",
        f"worktrees/{entry.name}/index.lock",
    ]
    for rel in stale:
        left_by_a_killed_git(dot / rel)
    left_by_a_killed_git(dot / "description.old")  # not a lock: never touched
    began = time.monotonic()
    (dot / "packed-refs.lock").write_bytes(b"")  # a lapsed driver's git, since the step began
    (root / "NOTES.md").write_text("more\n")
    with pytest.raises(workspace.ToolFailure, match=r"index\.lock"):
        workspace.git(root, "add", "-A")

    assert git_run.clear_stale_locks(root, began) == sorted(stale)
    assert (dot / "packed-refs.lock").exists() and (dot / "description.old").exists()
    workspace.git(root, "add", "-A")  # git works again
    workspace.git(workspace.worktree_path(root, "coder-a"), "status", "--porcelain")


def test_a_workspace_not_made_yet_has_no_locks_to_clear(tmp_path):
    assert git_run.clear_stale_locks(tmp_path / "none", time.monotonic()) == []


def steps(run_id, config, root, warm):
    """Drive the run one live turn a step, a killed git's index.lock left before each step;
    the outcomes."""
    journal = MemoryJournal()
    flown = WarmFlight(Session(journal, run_id), lambda s: flight.drive(s, config, root))
    outcomes: list[str] = []
    while not outcomes or outcomes[-1] == "stepped":
        if (root / config.workspace / ".git").is_dir():
            left_by_a_killed_git(root / config.workspace / ".git" / "index.lock")
        if warm:
            outcomes.append(flown.step(1, None).status)
        else:  # each step a session of its own, replaying the journal as a resumed run does
            cold = Session(journal, run_id, steps=1)
            outcomes.append(flight.drive(cold, config, root).status)
    return outcomes, [r.event for r in journal.read(f"run-{run_id}")]


@pytest.mark.slow
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_run_whose_git_was_killed_before_every_step_ends_as_an_uninterrupted_one(
    tmp_path, fly_team, warm
):
    reference = fly_team("first-flight")
    config = flight.plan("repo-fix", "first-flight", reference.run_id)
    outcomes, events = steps(reference.run_id, config, tmp_path, warm)
    assert outcomes[-1] == "done"
    assert facts(events) == facts(reference.events)
