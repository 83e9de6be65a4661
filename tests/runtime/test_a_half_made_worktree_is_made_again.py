"""A worktree that `git worktree add` did not finish (its worker killed half-way) is taken away
and made again, never committed from; a finished one is kept, with its writer's commits."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runtime import workspace
from teams.repos import template


@pytest.fixture
def root(tmp_path):
    workspaces = tmp_path / "workspaces"
    path = workspaces / "r-wt.workspace"
    workspace.prepare(path, template("parse-empty"), workspaces)
    return path


def entry_of(here):
    """The worktree's entry in its repository, as its .git names it."""
    return Path((here / ".git").read_text().removeprefix("gitdir: ").strip())


def killed_in_its_checkout(root, writer):
    """What a `git worktree add` killed while it checked files out leaves (as seen with 740 of
    3,000 files written): the entry locked "initializing", the files not yet written missing
    and, as the index was never filled in for them, staged as deleted."""
    here = workspace.worktree_path(root, writer)
    tracked = workspace.git(here, "ls-files").splitlines()
    unwritten = tracked[len(tracked) // 2 :]
    workspace.git(here, "rm", "-q", "--cached", *unwritten)
    for name in unwritten:
        (here / name).unlink()
    (entry_of(here) / "locked").write_text("initializing\n")
    return unwritten


def test_a_worktree_left_half_checked_out_is_made_again_and_commits_no_deletions(root):
    made = workspace.add_worktree(root, "coder-a")
    unwritten = killed_in_its_checkout(root, "coder-a")
    assert workspace.add_worktree(root, "coder-a") == made
    here = workspace.worktree_path(root, "coder-a")
    assert all((here / name).is_file() for name in unwritten)
    assert not (entry_of(here) / "locked").exists()
    assert workspace.commit_worktree(root, "coder-a", "nothing yet")["files"] == []


def test_a_directory_left_without_gits_pointer_is_made_again(root):
    here = workspace.worktree_path(root, "coder-a")
    here.mkdir()
    (here / "README.md").write_text("half\n")  # killed before git wrote the worktree's .git
    workspace.add_worktree(root, "coder-a")
    assert (here / ".git").is_file()
    assert workspace.commit_worktree(root, "coder-a", "nothing yet")["files"] == []


def test_an_entry_whose_directory_is_gone_does_not_refuse_the_add(root):
    workspace.add_worktree(root, "coder-a")
    here = workspace.worktree_path(root, "coder-a")
    (entry_of(here) / "locked").write_text("initializing\n")
    shutil.rmtree(here)  # git keeps a locked entry through a prune
    workspace.add_worktree(root, "coder-a")
    assert workspace.git(here, "status", "--porcelain") == ""


def test_a_finished_worktree_is_kept_with_its_writers_commits(root):
    made = workspace.add_worktree(root, "coder-a")
    here = workspace.worktree_path(root, "coder-a")
    (here / "NOTES.md").write_text("mine\n")
    committed = workspace.commit_worktree(root, "coder-a", "notes")
    assert workspace.add_worktree(root, "coder-a") == made
    assert workspace.git(here, "rev-parse", "HEAD") == committed["commit"]
    assert (here / "NOTES.md").read_text() == "mine\n"


def test_a_checkout_killed_half_way_is_made_again(root):
    commit = workspace.git(root, "rev-parse", "HEAD")
    workspace.add_checkout(root, "tester-T1", commit)
    here = workspace.worktree_path(root, "tester-T1")
    (entry_of(here) / "locked").write_text("initializing\n")
    (here / "README.md").unlink()
    again = workspace.add_checkout(root, "tester-T1", commit)
    assert again["base"] == commit and (here / "README.md").is_file()
    assert workspace.git(here, "status", "--porcelain") == ""
