"""A parallel writer's worktree is taken away once its work is merged, or the run stops (real
git, real pytest): a long-lived worker made two for every parallel run and kept them all, the
checked-out trees beside the workspace and git's entries for them. The branches stay."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.events import Integrated, WorktreeAdded, WorktreeRemoved
from runtime.jsonl import JsonlJournal
from runtime.model import ScriptedClient
from runtime.session import Session
from runtime.team import Services
from runtime.workspace import git
from teams import TEAMS
from teams.repo_fix import scenarios as S

pytestmark = pytest.mark.slow


def worktrees(root):
    """The worktrees git knows of the workspace at `root` (its own first)."""
    said = git(root, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in said if line.startswith("worktree ")]


def beside(root):
    """The directories beside the workspace named as its worktrees are (`<workspace>.<x>`)."""
    return sorted(p.name for p in root.parent.iterdir() if p.name.startswith(root.name + "."))


def test_each_writers_worktree_is_taken_away_once_its_work_is_merged(fly_team):
    flown = fly_team("parallel-writers")
    assert flown.outcome.status == "done"
    root = flown.workspace
    assert worktrees(root) == [str(root.resolve())]
    assert beside(root) == []
    written = [e for e in flown.events if isinstance(e, WorktreeAdded) and e.branch]
    removed = [e for e in flown.events if isinstance(e, WorktreeRemoved)]
    assert [(e.agent, e.writer, e.discarded) for e in removed if e.writer.startswith("coder")] == [
        ("coder-a", "coder-a-T1", []),
        ("coder-b", "coder-b-T2", []),
    ]
    # each taken away after its own merge; its branch, and so its commits, stay
    merged = {e.task_id: flown.events.index(e) for e in flown.events if isinstance(e, Integrated)}
    for e in removed[:2]:
        assert flown.events.index(e) > merged[e.task_id]
    for e in written:
        assert git(root, "rev-parse", "--verify", e.branch)
    # named beside the workspace, never where this server keeps it (exports carry events)
    assert [e.path for e in written] == [f"{root.name}.coder-a-T1", f"{root.name}.coder-b-T2"]
    assert not [e.kind for e in written + removed if str(root.parent) in e.model_dump_json()]
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical


def test_the_quiet_writers_worktree_goes_when_the_fix_moves_to_the_other(fly_team):
    flown = fly_team("lost-writer")
    root = flown.workspace
    assert worktrees(root) == [str(root.resolve())] and beside(root) == []
    removed = [e.writer for e in flown.events if isinstance(e, WorktreeRemoved)]
    assert removed[:3] == ["coder-b-T2", "coder-a-T1", "coder-a-T2"]


def test_the_worktrees_still_given_out_are_taken_away_when_the_run_stops(tmp_path):
    # One round, and the reviewer rejects coder-a's fix: the task is escalated and the run
    # stops with coder-b's fix drafted and never merged.
    config = flight.plan("repo-fix", "parallel-writers", "r-stopped", max_rounds=1)
    team = TEAMS["repo-fix"]
    scripts = {**team.scenarios["parallel-writers"].scripts}
    scripts["reviewer"] = [S.reject(40, "No: the guard hides the bug.")]
    clients = {a: ScriptedClient(scripts[a], a) for a in scripts}
    path = tmp_path / "journal.jsonl"
    outcome = team.fly(
        Session(JsonlJournal(path), "r-stopped"), config, clients, tmp_path, Services()
    )
    assert outcome.status == "escalated"
    root = tmp_path / config.workspace
    assert worktrees(root) == [str(root.resolve())] and beside(root) == []
    events = [r.event for r in JsonlJournal(path).read("run-r-stopped")]
    assert [e.writer for e in events if isinstance(e, WorktreeRemoved)] == [
        "coder-a-T1",
        "coder-b-T2",
    ]
    assert git(root, "diff", "--name-only", "main", "writer/coder-b-T2").splitlines() == [S.SLUG]
    assert flight.replay(JsonlJournal(path), "r-stopped").identical
