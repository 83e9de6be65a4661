"""What an agent's test leaves behind is handled outside the sandbox, with the worker's rights:
pytest's report is read, the jurisdiction's snapshot reads what the run may not change, the
file tools open what the agent names, and the harness's git commits the tree. Each was a way
out: a FIFO where the worker reads blocked a worker thread for good; a repository planted in
the workspace, or a writer's worktree pointed at one, had the harness's git run its config's
commands. Each attack here is a real test run in real bubblewrap, and a marker file outside
every sandbox says whether anything ran."""

from __future__ import annotations

import os
import stat
import subprocess
import textwrap
from pathlib import Path

import pytest

from runtime import workspace
from runtime.agent_files import WorkspaceTampered, nested_repositories
from runtime.sandbox import Sandbox
from teams.repo_fix.roles import ROLES
from tests.security.sandboxing import fresh_workspace, needs_bwrap, tool

pytestmark = needs_bwrap

NO_SANDBOX = Sandbox(required=False)  # the operator's opt-out: the harness must still hold


def planted_repository(where: str, marker: Path) -> str:
    """An agent test that makes a git repository at `where` (relative to the test's directory)
    whose config runs a command (touching `marker`) whenever git looks inside it."""
    return textwrap.dedent(
        f"""\
        import os, subprocess
        HERE = os.path.dirname(os.path.abspath(__file__))


        def test_plant():
            repo = os.path.join(HERE, {where!r})
            os.makedirs(repo, exist_ok=True)
            env = {{"HOME": HERE, "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}}
            run = lambda *a: subprocess.run(["git", *a], cwd=repo, env=env, check=True)
            run("init", "-q")
            run("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q",
                "--allow-empty", "-m", "mine")
            run("config", "core.fsmonitor", "touch {marker}; false")
        """
    )


def test_a_repository_planted_in_the_workspace_is_never_committed(tmp_path):
    marker = tmp_path / "ran-with-the-workers-rights"
    _, root = fresh_workspace(tmp_path)
    head = workspace.git(root, "rev-parse", "HEAD")
    tool(
        root,
        "write_file",
        path="tests/test_plant.py",
        content=planted_repository("../vendored", marker),
    )
    ran = tool(root, "run_tests", target="tests/test_plant.py")
    assert ran["result"]["passed"] == 1  # the sandbox let it make a repository: its own files
    assert (root / "vendored" / ".git").is_dir()
    with pytest.raises(WorkspaceTampered, match=r"another git repository \(vendored/\.git\)"):
        workspace.commit_candidate(root, "candidate/t1", "t1 round 1")
    assert not marker.exists()
    # Nothing was added or committed.
    assert workspace.git(root, "rev-parse", "main") == head
    assert workspace.git(root, "diff", "--cached", "--name-only") == ""


def test_the_attack_is_real_and_the_harness_git_holds_even_before_the_refusal(tmp_path):
    """Without the refusal, adding the tree and asking git's status runs the planted
    repository's config, as plain git does here. The harness's own git also switches that
    command off (a second lock: a planted repository may name other commands)."""
    marker = tmp_path / "ran-with-the-workers-rights"
    _, root = fresh_workspace(tmp_path)
    content = planted_repository("../vendored", marker)
    tool(root, "write_file", path="tests/test_plant.py", content=content)
    tool(root, "run_tests", target="tests/test_plant.py")
    workspace.git(root, "add", "-A")
    workspace.git(root, "status", "--porcelain")
    assert not marker.exists()
    plain = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "status", "--porcelain"], cwd=root, env=plain, capture_output=True)
    assert marker.exists()


def a_writer(tmp_path: Path) -> tuple[Path, Path]:
    """The workspace, and a parallel writer's worktree of it (whose .git is a file)."""
    _, root = fresh_workspace(tmp_path)
    workspace.add_worktree(root, "coder-a")
    path = workspace.worktree_path(root, "coder-a")
    assert (path / ".git").is_file()
    return root, path


REPOINT = textwrap.dedent(
    """\
    import os, pathlib
    HERE = os.path.dirname(os.path.abspath(__file__))


    def test_repoint():
        top = os.path.dirname(HERE)
        pathlib.Path(top, ".git").write_text("gitdir: " + os.path.join(top, "evil") + "\\n")
    """
)


def test_a_writers_test_cannot_point_its_worktree_at_a_repository_of_its_own(tmp_path):
    root, path = a_writer(tmp_path)
    pointer = (path / ".git").read_bytes()
    tool(path, "write_file", path="tests/test_repoint.py", content=REPOINT)
    ran = tool(path, "run_tests", target="tests/test_repoint.py")
    assert ran["result"]["failed"] == 1
    assert "Read-only file system" in ran["result"]["trace"]
    assert (path / ".git").read_bytes() == pointer
    assert workspace.commit_worktree(root, "coder-a", "t1 round 1")["branch"] == "writer/coder-a"


def repointed(marker: Path) -> str:
    """An agent test that makes `evil/` a repository's directory (no `.git` inside it: nothing
    a search for planted repositories finds), whose config runs a command, and points the
    worktree's .git at it."""
    return textwrap.dedent(
        f"""\
        import os, pathlib, subprocess
        HERE = os.path.dirname(os.path.abspath(__file__))


        def test_repoint():
            top = os.path.dirname(HERE)
            evil = os.path.join(top, "evil")
            env = {{"HOME": HERE, "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}}
            run = lambda *a: subprocess.run(["git", "--git-dir", evil, *a], env=env, check=True)
            run("init", "-q", "--bare")
            run("config", "core.bare", "false")
            run("config", "core.worktree", top)
            run("config", "core.fsmonitor", "touch {marker}; false")
            pathlib.Path(top, ".git").write_text("gitdir: " + evil + "\\n")
        """
    )


def test_without_the_sandbox_a_repointed_worktree_is_refused_before_git_runs(tmp_path):
    marker = tmp_path / "ran-with-the-workers-rights"
    root, path = a_writer(tmp_path)
    tool(path, "write_file", path="tests/test_repoint.py", content=repointed(marker))
    ran = tool(path, "run_tests", sandbox=NO_SANDBOX, target="tests/test_repoint.py")
    assert ran["result"]["passed"] == 1
    assert nested_repositories(path) == []  # so only the pointer's check stands in the way
    with pytest.raises(WorkspaceTampered, match=r"names .*evil.* as its repository"):
        workspace.commit_worktree(root, "coder-a", "t1 round 1")
    assert not marker.exists()


FIFO_REPORT = textwrap.dedent(
    """\
    import os


    def pytest_unconfigure(config):
        report = config.option.xmlpath
        if report and os.path.exists(report):
            os.unlink(report)
            os.mkfifo(report)
    """
)
LINKED_REPORT = FIFO_REPORT.replace("os.mkfifo(report)", "os.symlink('/etc/hostname', report)")
PASSING = "def test_passes():\n    assert True\n"


@pytest.mark.parametrize(
    ("conftest", "why"),
    [(FIFO_REPORT, "pytest's report is a FIFO"), (LINKED_REPORT, "is a symbolic link")],
    ids=["fifo", "link"],
)
def test_a_report_swapped_for_a_fifo_or_a_link_is_refused_not_waited_on(tmp_path, conftest, why):
    _, root = fresh_workspace(tmp_path)
    tool(root, "write_file", path="conftest.py", content=conftest)
    tool(root, "write_file", path="tests/test_passes.py", content=PASSING)
    ran = tool(root, "run_tests", target="tests/test_passes.py")
    assert ran["error"]["type"] == "NotAFile"  # not a ToolTimeout: nothing waited
    assert why in ran["error"]["message"]


def test_a_fifo_outside_a_testers_jurisdiction_is_noticed_and_taken_out_unopened(tmp_path):
    _, root = fresh_workspace(tmp_path)
    tester = ROLES["tester"].writable
    test = "import os\n\n\ndef test_fifo():\n    os.mkfifo('textparse/pipe')  # run from the workspace's top\n"
    tool(root, "write_file", tester, path="tests/test_fifo.py", content=test)
    ran = tool(root, "run_tests", tester, target="tests/test_fifo.py")
    assert ran["error"]["type"] == "OutsideJurisdiction"
    assert "textparse/pipe" in ran["error"]["message"]
    assert not os.path.lexists(root / "textparse" / "pipe")


def test_the_file_tools_refuse_a_fifo_a_test_left_instead_of_blocking(tmp_path):
    _, root = fresh_workspace(tmp_path)
    test = "import os\n\n\ndef test_fifo():\n    os.mkfifo('pipe')\n"
    tool(root, "write_file", path="tests/test_fifo.py", content=test)
    assert tool(root, "run_tests", target="tests/test_fifo.py")["result"]["passed"] == 1
    fifo = root / "pipe"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    wrote = tool(root, "write_file", path="pipe", content="x")
    assert wrote["error"] == {"type": "NotAFile", "message": "pipe is a FIFO, not a file"}
    assert tool(root, "read_file", path="pipe")["error"]["type"] == "FileNotFoundError"
    assert tool(root, "edit_file", path="pipe", old="a", new="b")["error"]["type"] == (
        "FileNotFoundError"
    )
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_read_file_refuses_a_file_larger_than_it_reads(tmp_path):
    _, root = fresh_workspace(tmp_path)
    (root / "big.txt").write_text("x" * (workspace.MAX_READ + 1))
    read = tool(root, "read_file", path="big.txt")
    assert read["error"]["message"] == f"big.txt is larger than {workspace.MAX_READ} bytes"
    (root / "big.txt").write_text("x" * workspace.MAX_READ)
    assert len(tool(root, "read_file", path="big.txt")["result"]) == workspace.MAX_READ
