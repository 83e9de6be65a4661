"""Directories an agent's test makes and locks (`os.chmod(d, 0)`, `0o500`): a worker that is not
root (the image runs as `minutes`) could neither list nor empty them. The tester's restore of
its jurisdiction failed at the end of that run and of every run after it (PermissionError, the
tester never got a result again), and the worktree could not be taken away: the step doing it
failed on every retry. Each attack here is a real test run in real bubblewrap; the worker is
made to hold no more than an owner's rights (as root here, without CAP_DAC_OVERRIDE)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.security.sandboxing import needs_bwrap

pytestmark = needs_bwrap

LOCKING = (
    "import os\n\n\ndef test_lock():\n"
    "    os.makedirs('tests/locked/deeper')\n"
    "    open('tests/locked/deeper/f', 'w').write('x')\n"
    "    os.chmod('tests/locked/deeper', 0)\n"
    "    os.chmod('tests/locked', 0o500)\n"
)


def as_owner(code: str, where: Path, also: str = "") -> str:
    """Run `code` in a Python of its own with only the rights an owner has (the worker's, when
    it is not root); what it printed last. `also`: more capabilities root gives up (",-fowner":
    to chmod only what it owns)."""
    command = [sys.executable, "-c", textwrap.dedent(code), str(where)]
    if os.getuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv (util-linux) is needed to run as root without its rights")
        command = [setpriv, f"--bounding-set=-dac_override,-dac_read_search{also}", *command]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


SETUP = f"""
    import sys
    from pathlib import Path
    from runtime import workspace
    from runtime.tools import execute, Toolbox
    from runtime.model import ToolCall
    from teams.repos import template
    base = Path(sys.argv[1])
    ws = base / "w"
    workspace.prepare(ws, template("parse-empty"))
    LOCKING = {LOCKING!r}
    def run_tests(where, writable):
        box = Toolbox(workspace.toolset(where, writable))
        call = ToolCall(id="c", name="run_tests", args={{"target": "tests/test_lock.py"}})
        seen = execute(box.check(call, "agent"), call.args).observation()
        # Root without its rights can make no pids cgroup, and the answer says the process
        # limit is not enforced (tests/security/test_sandbox_fork_bomb.py): not what is read here.
        seen.get("result", {{}}).pop("not_enforced", None)
        return seen
"""


def test_the_testers_run_that_locks_what_it_made_is_answered_and_its_worktree_taken_away(
    tmp_path,
):
    said = as_owner(
        SETUP
        + """
    workspace.add_checkout(ws, "tester-T3", workspace.git(ws, "rev-parse", "HEAD"))
    where = base / "w.tester-T3"
    (where / "tests/test_lock.py").write_text(LOCKING)
    first = run_tests(where, lambda p: p.startswith("tests/"))
    again = run_tests(where, lambda p: p.startswith("tests/"))
    gone = workspace.discard_checkout(ws, "tester-T3")
    print(repr((first, again.get("result", again), gone["discarded"], where.exists())))
    """,
        tmp_path,
    )
    first, again, discarded, left = eval(said)  # our own child's repr
    assert first == {"tool": "run_tests", "result": {"passed": 1, "failed": 0}}
    # a result again (the directory is there now: the test's makedirs fails), where the
    # restore's PermissionError was the answer to every run after the first
    assert (again["passed"], again["failed"]) == (0, 1) and "FileExistsError" in again["trace"]
    assert discarded == ["tests/locked/deeper/f", "tests/test_lock.py"]
    assert not left and sorted(p.name for p in tmp_path.iterdir()) == ["w"]


def test_a_writers_worktree_whose_test_locked_a_directory_is_taken_away(tmp_path):
    said = as_owner(
        SETUP
        + """
    workspace.add_worktree(ws, "coder-a-T1")
    where = base / "w.coder-a-T1"
    (where / "tests/test_lock.py").write_text(LOCKING)
    ran = run_tests(where, None)
    workspace.remove_worktree(ws, "coder-a-T1")
    listed = workspace.git(ws, "worktree", "list", "--porcelain").count("worktree ")
    print(repr((ran["result"], where.exists(), listed)))
    """,
        tmp_path,
    )
    assert eval(said) == ({"passed": 1, "failed": 0}, False, 1)


SHUTTING = LOCKING + "    open('tests/shut', 'w').write('y')\n    os.chmod('tests/shut', 0)\n"


def test_what_a_test_made_and_locked_is_in_the_candidate_committed(tmp_path):
    # git add -A passes over a directory it cannot open (a warning, status 0): the candidate
    # committed would have lacked what the test wrote there, unlike the tree that was tested
    # (and a file it cannot read failed the whole add).
    said = as_owner(
        SETUP
        + f"""
    workspace.add_worktree(ws, "coder-a-T1")
    where = base / "w.coder-a-T1"
    (where / "tests/test_lock.py").write_text({SHUTTING!r})
    ran = run_tests(where, None)
    written = workspace.commit_worktree(ws, "coder-a-T1", "T1 round 1")
    (ws / "tests/test_lock.py").write_text({SHUTTING!r})
    run_tests(ws, None)
    with workspace.checkout(ws) as copy:
        copied = (copy / "tests/locked/deeper/f").read_text()
    candidate = workspace.commit_candidate(ws, "candidate/T2", "T2 round 1")
    shown = workspace.git(ws, "show", "candidate/T2:tests/locked/deeper/f")
    print(repr((ran["result"], written["files"], candidate["files"], copied, shown)))
    """,
        tmp_path,
    )
    committed = ["tests/locked/deeper/f", "tests/shut", "tests/test_lock.py"]
    assert eval(said) == ({"passed": 1, "failed": 0}, committed, committed, "x", "x")


def test_a_locked_file_the_worker_cannot_open_refuses_the_candidate_by_name(tmp_path):
    if os.getuid() != 0:
        pytest.skip("a directory of another user's is made as root")
    said = as_owner(
        SETUP
        + """
    import os
    from runtime.agent_files import WorkspaceTampered
    (ws / "tests/theirs").mkdir()
    os.chmod(ws / "tests/theirs", 0)
    os.chown(ws / "tests/theirs", 4321, 4321)  # another user's (root keeps CAP_CHOWN)
    try:
        workspace.commit_candidate(ws, "candidate/T1", "T1 round 1")
    except WorkspaceTampered as refused:
        print(repr(str(refused)))
    """,
        tmp_path,
        also=",-fowner",  # root may chmod only what it owns: a worker that is not root
    )
    refused = eval(said)
    assert "tests/theirs (Operation not permitted)" in refused
    assert "differ from the tree that was tested" in refused
