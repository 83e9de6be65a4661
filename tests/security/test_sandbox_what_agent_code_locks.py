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


def as_owner(code: str, where: Path) -> str:
    """Run `code` in a Python of its own with only the rights an owner has (the worker's, when
    it is not root); what it printed last."""
    command = [sys.executable, "-c", textwrap.dedent(code), str(where)]
    if os.getuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv (util-linux) is needed to run as root without its rights")
        command = [setpriv, "--bounding-set=-dac_override,-dac_read_search", *command]
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
        return execute(box.check(call, "agent"), call.args).observation()
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
