"""A fork bomb in an agent's test is ended at the run's process limit, root's run too: the
kernel does not apply RLIMIT_NPROC to uid 0, so each run has a pids cgroup of its own
(runtime/sandbox_cgroup.py). Where none can be made and the worker is root, the limit is said
to be unenforced, in the log and in the tool's answer (and once in the run's findings), rather
than pretended."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from runtime import sandbox, sandbox_cgroup
from runtime.diagnose import diagnose
from runtime.events import ToolReturned
from runtime.journal import Recorded
from runtime.sandbox import Limits, Sandbox
from runtime.signatures.limits import PROCESSES
from tests.security.sandboxing import fresh_workspace, needs_bwrap, tool

pytestmark = [needs_bwrap, pytest.mark.slow]  # real processes run to their limits

BOMB = "import os\n\n\ndef test_bomb():\n    while True:\n        os.fork()\n"


def pids_groups_here() -> bool:
    group = sandbox_cgroup.create(8)
    if group is None:
        return False
    group.end()
    return True


needs_pids_groups = pytest.mark.skipif(
    not pids_groups_here(),
    reason="no pids cgroup can be made here (cgroup v1 /sys/fs/cgroup/pids or v2 with the "
    "pids controller, writable by this process)",
)


def processes_naming(text: str) -> list[int]:
    """The processes whose command line holds `text` (the workspace: every fork of the run's
    pytest has its command line)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue  # ended while we looked
    return found


def groups_left() -> list[str]:
    """This process's run groups: other test runs on the host make and remove their own."""
    parent = sandbox_cgroup._parent(sandbox_cgroup.CGROUPS, sandbox_cgroup.MEMBERSHIP)
    assert parent is not None
    mine = f"minutes-sandbox-{os.getpid()}-"
    return [p.name for p in parent.iterdir() if p.name.startswith(mine)]


@needs_pids_groups
@pytest.mark.parametrize("required", [True, False], ids=["sandboxed", "opted-out"])
def test_a_fork_bomb_ends_at_the_process_limit_and_leaves_no_process(tmp_path, required):
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_bomb.py").write_text(BOMB)
    before = groups_left()
    limited = Sandbox(required=required, limits=Limits(processes=64))
    observation = tool(root, "run_tests", sandbox=limited, target="tests/test_bomb.py")
    assert observation["error"]["type"] == "LimitReached", observation
    assert observation["error"]["message"] == (
        "pytest was ended: it reached its limit of 64 processes and threads "
        "(Limits.processes; a fork bomb?)"
    )
    assert processes_naming(str(root)) == []
    assert groups_left() == before


@needs_pids_groups
def test_a_run_under_the_limit_is_not_ended_and_says_nothing_unenforced(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "_said", [])
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_few.py").write_text(
        "import os\n\n\ndef test_few():\n    for _ in range(8):\n        pid = os.fork()\n"
        "        if pid == 0:\n            os._exit(0)\n        os.waitpid(pid, 0)\n"
    )
    limited = Sandbox(limits=Limits(processes=64))
    observation = tool(root, "run_tests", sandbox=limited, target="tests/test_few.py")
    assert observation["result"] == {"passed": 1, "failed": 0}


@pytest.mark.skipif(os.getuid() != 0, reason="RLIMIT_NPROC binds a worker that is not root")
def test_as_root_with_no_pids_group_the_limit_is_said_unenforced_once(
    tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr(sandbox_cgroup, "CGROUPS", tmp_path / "no-cgroups")
    monkeypatch.setattr(sandbox, "_said", [])
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_ok.py").write_text("def test_ok():\n    pass\n")
    with caplog.at_level(logging.WARNING, logger="minutes.sandbox"):
        first = tool(root, "run_tests", target="tests/test_ok.py")
        second = tool(root, "run_tests", target="tests/test_ok.py")
    for observation in (first, second):
        assert observation["result"]["passed"] == 1
        said = observation["result"]["not_enforced"]
        assert said.startswith("the process limit (Limits.processes) is not enforced here")
    warnings = [r.getMessage() for r in caplog.records if "not enforced" in r.getMessage()]
    assert len(warnings) == 1 and "fork bomb" in warnings[0]
    # The run's findings say it once, with what to do, however many answers said it.
    answers = [
        ToolReturned(run_id="r-1", tool="run_tests", call_id=f"c{i}", result=o["result"])
        for i, o in enumerate((first, second))
    ]
    found = diagnose([Recorded("run-r-1", i + 1, i + 1, e) for i, e in enumerate(answers)])
    assert [(f["kind"], f["summary"], f["positions"]) for f in found] == [
        ("limit_not_enforced", PROCESSES, [1, 2])
    ]


@needs_pids_groups
@pytest.mark.skipif(os.getuid() != 0, reason="RLIMIT_NPROC binds a worker that is not root")
def test_a_run_that_had_its_group_says_nothing_unenforced_after_one_that_had_none(
    tmp_path, monkeypatch
):
    """What a run answers is its own: once a group could not be made, every later run said the
    limit was not enforced, though each had its group."""
    monkeypatch.setattr(sandbox, "_said", [])
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    bare = Sandbox(required=False)
    with monkeypatch.context() as without:
        without.setattr(sandbox_cgroup, "CGROUPS", tmp_path / "no-cgroups")
        sandbox.run(["true"], workspace=tmp_path, scratch=scratch, timeout=30, sandbox=bare)
        assert sandbox.unenforced().startswith("the process limit (Limits.processes)")
    sandbox.run(["true"], workspace=tmp_path, scratch=scratch, timeout=30, sandbox=bare)
    assert sandbox.unenforced() == ""
