"""The harness's merge into main (runtime/merges.py) on real git repositories: one that
conflicts is aborted, main left clean as it was, and the files named; one a crash left
unfinished is aborted before the next merge, which then goes through."""

from __future__ import annotations

import os
import subprocess

import pytest

from runtime import git_run, merges, workspace
from runtime.workspace import git


@pytest.fixture
def repo(tmp_path):
    template = tmp_path / "template"
    template.mkdir()
    (template / "shared.txt").write_text("one\n")
    (template / "other.txt").write_text("two\n")
    root = tmp_path / "workspaces" / "r.workspace"
    workspace.prepare(root, template, tmp_path / "workspaces")
    return root


def branch(root, name, path, text):
    """`name`, from main as it stands, with `path` rewritten to `text`; back on main after."""
    git(root, "checkout", "-q", "-b", name, "main")
    (root / path).write_text(text)
    git(root, "commit", "-q", "-am", f"{name} changes {path}")
    git(root, "checkout", "-q", "main")


def test_a_merge_that_conflicts_is_aborted_and_names_the_files(repo):
    branch(repo, "first", "shared.txt", "first\n")
    branch(repo, "second", "shared.txt", "second\n")
    branch(repo, "third", "other.txt", "third\n")
    merged = merges.merge(repo, "first", "integrate first")
    with pytest.raises(merges.MergeConflict) as refused:
        merges.merge(repo, "second", "integrate second")
    assert refused.value.files == ["shared.txt"]
    assert "conflicts in shared.txt" in str(refused.value)
    assert "aborted" in str(refused.value)
    assert not merges.merging(repo)
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert git(repo, "rev-parse", "main") == merged
    assert (repo / "shared.txt").read_text() == "first\n"
    # the repository is usable: the next merge goes through
    assert merges.merge(repo, "third", "integrate third") != merged
    assert (repo / "other.txt").read_text() == "third\n"


def stuck(repo, name):
    """Merge `name` as a worker killed mid-merge leaves it (or a run from before the abort):
    unmerged paths and MERGE_HEAD set, an index `git checkout main` refuses."""
    env = {**os.environ, **git_run.GIT_ENV}
    done = subprocess.run(["git", "merge", "-q", name], cwd=repo, env=env, capture_output=True)
    assert done.returncode != 0 and merges.merging(repo)
    assert git(repo, "status", "--porcelain") == "UU shared.txt"


def test_a_merge_a_crash_left_unfinished_is_aborted_before_the_next_one(repo):
    branch(repo, "first", "shared.txt", "first\n")
    branch(repo, "second", "shared.txt", "second\n")
    branch(repo, "third", "other.txt", "third\n")
    merged = merges.merge(repo, "first", "integrate first")
    stuck(repo, "second")
    with pytest.raises(merges.MergeConflict):  # tried again on resume: aborted, then refused
        merges.merge(repo, "second", "integrate second")
    assert git(repo, "status", "--porcelain") == "" and git(repo, "rev-parse", "main") == merged
    stuck(repo, "second")
    third = merges.merge(repo, "third", "integrate third")
    assert git(repo, "rev-parse", f"{third}^1") == merged
    assert git(repo, "status", "--porcelain") == "" and not merges.merging(repo)
    assert (repo / "shared.txt").read_text() == "first\n"
