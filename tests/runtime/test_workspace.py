"""The coding tools work in a real git repository and never outside it."""

from __future__ import annotations

import os

import pytest

from runtime import workspace
from runtime.model import ToolCall
from runtime.tools import Toolbox, execute
from runtime.workspace import PathRefused, inside
from teams.repos import template


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws") / "w"
    commit = workspace.prepare(root, template("parse-empty"))
    assert len(commit) == 40
    return root


def call(root, name, writable=None, **args):
    box = Toolbox(workspace.toolset(root, writable))
    tool = box.check(ToolCall(id="c", name=name, args=args), "coder")
    return execute(tool, args).observation()


def test_prepare_makes_a_git_repository_with_the_template_committed(repo):
    assert workspace.git(repo, "status", "--porcelain") == ""
    assert workspace.git(repo, "log", "--format=%s") == "workspace from template parse-empty"


def test_commits_are_the_same_whenever_the_template_is_prepared(tmp_path, repo):
    assert workspace.prepare(tmp_path / "again", template("parse-empty")) == workspace.git(
        repo, "rev-parse", "HEAD"
    )


def test_list_and_read_files(repo):
    files = call(repo, "list_files")["result"]
    assert "textparse/parser.py" in files and not any(f.startswith(".git") for f in files)
    assert "def parse" in call(repo, "read_file", path="textparse/parser.py")["result"]


def test_a_worktree_lists_the_same_files_and_not_its_pointer_to_the_repository(tmp_path):
    """A worktree's `.git` is a file, git's pointer to the repository: no file of the project."""
    root = tmp_path / "w"
    commit = workspace.prepare(root, template("parse-empty"))
    added = workspace.add_checkout(root, "tester-T3", commit)
    assert (added["branch"], added["base"], added["path"]) == ("", commit, "w.tester-T3")
    looked = workspace.worktree_path(root, "tester-T3")
    assert (looked / ".git").is_file()
    assert call(looked, "list_files")["result"] == call(root, "list_files")["result"]
    (looked / "tests" / "test_more.py").write_text("")
    (looked / "README.md").write_text("changed\n")
    removed = workspace.discard_checkout(root, "tester-T3")
    assert removed == {
        "writer": "tester-T3",
        "path": "w.tester-T3",
        "discarded": ["README.md", "tests/test_more.py"],
    }
    assert not looked.exists() and workspace.git(root, "status", "--porcelain") == ""
    assert workspace.discard_checkout(root, "tester-T3")["discarded"] == []  # gone already


@pytest.mark.parametrize(
    "path", ["../outside.txt", "/etc/passwd", "textparse/../../x", ".git/config"]
)
def test_a_path_that_escapes_the_workspace_is_refused(repo, path):
    observation = call(repo, "write_file", path=path, content="x")
    assert observation["error"]["type"] == "PathRefused"
    assert not (repo.parent / "outside.txt").exists()


def test_a_symlink_pointing_out_is_refused(repo, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    os.symlink(outside, repo / "link.txt")
    try:
        assert call(repo, "read_file", path="link.txt")["error"]["type"] == "PathRefused"
    finally:
        (repo / "link.txt").unlink()


def test_inside_names_the_offending_path(repo):
    with pytest.raises(PathRefused, match=r"'\.\./x' is outside the workspace"):
        inside(repo, "../x")


def test_a_jurisdiction_limits_where_an_agent_may_write(repo):
    docs_only = lambda rel: rel.startswith("docs/")  # noqa: E731
    refused = call(repo, "write_file", docs_only, path="textparse/parser.py", content="")
    assert "outside what this agent may edit" in refused["error"]["message"]
    assert (
        call(repo, "write_file", docs_only, path="docs/changes.md", content="# x\n")["result"][
            "written"
        ]
        == "docs/changes.md"
    )
    (repo / "docs/changes.md").unlink()
    (repo / "docs").rmdir()


def test_edit_file_needs_exactly_one_occurrence(repo):
    observation = call(repo, "edit_file", path="textparse/parser.py", old="field", new="x")
    assert "occurs 5 times" in observation["error"]["message"]


def test_run_tests_reports_counts_and_the_failure_trace_without_paths_or_timings(repo):
    result = call(repo, "run_tests")["result"]
    assert (result["passed"], result["failed"]) == (1, 1)
    assert "test_empty_input_has_no_fields" in result["trace"]
    assert str(repo) not in result["trace"]


def test_run_tests_on_a_broken_suite_is_a_tool_exit(tmp_path):
    root = tmp_path / "w"
    workspace.prepare(root, template("parse-empty"))
    (root / "tests" / "test_parser.py").write_text("def test_x(:\n")
    observation = call(root, "run_tests")
    assert observation["error"]["type"] == "ToolExit"
    assert "pytest exited 2" in observation["error"]["message"]


def test_write_file_refuses_more_than_the_limit_and_says_it(tmp_path):
    root = tmp_path / "w"
    workspace.prepare(root, template("parse-empty"))
    full = "a" + "x" * (workspace.MAX_WRITE - 1)
    at_limit = call(root, "write_file", path="big.txt", content=full)
    assert at_limit["result"] == {"written": "big.txt", "bytes": workspace.MAX_WRITE}
    over = call(root, "write_file", path="bigger.txt", content="é" * (workspace.MAX_WRITE // 2 + 1))
    assert over["error"]["type"] == "TooLarge"
    assert over["error"]["message"] == (
        f"bigger.txt would hold {workspace.MAX_WRITE + 2} bytes; a file written by the tools may "
        f"hold at most {workspace.MAX_WRITE} bytes (what read_file reads): nothing was written"
    )
    assert not (root / "bigger.txt").exists()
    # edit_file cannot grow a file past it either
    grown = call(root, "edit_file", path="big.txt", old="a", new="ab")
    assert grown["error"]["type"] == "TooLarge"
    assert (root / "big.txt").read_text() == full
