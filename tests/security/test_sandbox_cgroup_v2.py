"""The pids group on cgroup v2 (the unified hierarchy), tried against a tree of the test's
making: the hosts here have v1, so the v2 path would otherwise never run before a v2 host does.

The tree is plain directories and files where the kernel has control files: what the module
writes is read back from them. Where the kernel would refuse a write (EBUSY for enabling a
controller in a group with processes of its own), the fake's control file is one no process
may write, so the write fails as it would there.
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import pytest

from runtime import sandbox, sandbox_cgroup
from runtime.sandbox import Limits

# A file every process may read and none may write, root included (sysctl checks its mode
# bits for root too): the fake's stand-in for a control file the kernel refuses to change.
UNWRITABLE = Path("/proc/sys/kernel/osrelease")


def v2_tree(tmp_path: Path, enabled: str = "") -> tuple[Path, Path, Path]:
    """(the mount root, this process's group in it, the membership file naming that group):
    a delegated group `/worker.service` whose own processes include this one."""
    root = tmp_path / "cgroup2"
    group = root / "worker.service"
    group.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (group / "cgroup.controllers").write_text("cpu io memory pids\n")
    (group / "cgroup.subtree_control").write_text(enabled)
    (group / "cgroup.procs").write_text(f"{os.getpid()}\n")
    membership = tmp_path / "membership"
    membership.write_text("0::/worker.service\n")  # v2 alone: one line, no controller named
    return root, group, membership


def refusing(group: Path) -> None:
    """The group's subtree_control as the kernel keeps it for a group with processes of its
    own that is no root: readable, and a write enabling a controller refused."""
    (group / "cgroup.subtree_control").unlink()
    (group / "cgroup.subtree_control").symlink_to(UNWRITABLE)


def made(group: Path) -> list[str]:
    return sorted(p.name for p in group.iterdir() if p.name.startswith("minutes-sandbox-"))


def test_in_a_delegated_group_the_pids_controller_is_enabled_and_a_child_limits_the_run(
    tmp_path,
):
    root, group, membership = v2_tree(tmp_path)
    made_group = sandbox_cgroup.create(64, root=root, membership=membership)
    assert made_group is not None
    assert (group / "cgroup.subtree_control").read_text() == "+pids"  # asked for, for children
    assert made_group.path.parent == group and made(group) == [made_group.path.name]
    assert (made_group.path / "pids.max").read_text() == "64"

    # The run's first process writes its own pid into the group before it execs the run.
    said = subprocess.run(
        made_group.joined(["/bin/sh", "-c", "echo $$"]), capture_output=True, text=True
    )
    assert said.returncode == 0, said.stderr
    assert (made_group.path / "cgroup.procs").read_text().split() == said.stdout.split()

    (made_group.path / "cgroup.procs").write_text("")  # as the kernel does once it has ended
    (made_group.path / "pids.events").write_text("max 3\n")
    assert made_group.reached()
    made_group.end(patience=0)
    # No fork succeeds from then on, and v2's kill ends what is left at once.
    assert (made_group.path / "pids.max").read_text() == "0"
    assert (made_group.path / "cgroup.kill").read_text() == "1"


def test_a_group_that_has_pids_for_its_children_already_is_left_as_it_is(tmp_path):
    root, group, membership = v2_tree(tmp_path, enabled="cpu pids\n")
    made_group = sandbox_cgroup.create(16, root=root, membership=membership)
    assert made_group is not None and (made_group.path / "pids.max").read_text() == "16"
    assert (group / "cgroup.subtree_control").read_text() == "cpu pids\n"  # not written


def test_a_group_with_processes_of_its_own_cannot_give_pids_to_children_and_answers_none(
    tmp_path,
):
    root, group, membership = v2_tree(tmp_path)
    refusing(group)
    assert sandbox_cgroup.create(64, root=root, membership=membership) is None
    assert made(group) == []  # nothing made, nothing left


def test_a_hierarchy_without_the_pids_controller_answers_none(tmp_path):
    root, group, membership = v2_tree(tmp_path)
    (root / "cgroup.controllers").write_text("cpu io memory\n")
    assert sandbox_cgroup.create(64, root=root, membership=membership) is None
    assert made(group) == [] and (group / "cgroup.subtree_control").read_text() == ""


@pytest.mark.skipif(os.getuid() != 0, reason="RLIMIT_NPROC binds a worker that is not root")
def test_as_root_a_refused_v2_group_leaves_the_limit_said_unenforced(tmp_path, monkeypatch, caplog):
    root, group, membership = v2_tree(tmp_path)
    refusing(group)
    monkeypatch.setattr(sandbox_cgroup, "CGROUPS", root)
    monkeypatch.setattr(sandbox_cgroup, "MEMBERSHIP", membership)
    monkeypatch.setattr(sandbox, "_said", [])
    with caplog.at_level(logging.WARNING, logger="minutes.sandbox"):
        assert sandbox._pids_group(Limits(processes=64)) is None
    assert sandbox.unenforced() == sandbox.NO_PROCESS_LIMIT
    assert [r.getMessage() for r in caplog.records] == [
        f"{sandbox.NO_PROCESS_LIMIT}; a fork bomb in an agent's test can take every pid of the host"
    ]
