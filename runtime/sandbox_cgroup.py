"""A pids cgroup for one run of agent code: a process limit that root is not exempt from.

`Limits.processes` as RLIMIT_NPROC binds no process of uid 0 (nor one whose user namespace maps
to 0), and workers and CI run as root: a fork bomb in an agent's test could take every pid of
the host until its timeout. A pids cgroup counts the run's processes and threads whoever runs
them, and its forks beyond `pids.max` fail. Each run gets a group of its own, made beside this
process's own group: cgroup v1's pids hierarchy (/sys/fs/cgroup/pids), or v2's unified one where
it offers the pids controller. The run's first process joins the group before it execs anything
(`joined`), so everything it starts is in it; `end` kills what is left in it and removes it.

Where no group can be made (no such hierarchy, not writable, v2 refusing a child's controllers),
`create` answers None and the caller says what is not enforced. The hierarchy's mount root and
the file naming this process's groups are arguments (by default the host's), so the v2 path
can be tried against a tree of a test's making on a host that has v1.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from pathlib import Path

CGROUPS = Path("/sys/fs/cgroup")
MEMBERSHIP = Path("/proc/self/cgroup")  # this process's group in each hierarchy
_numbers = itertools.count(1)


class PidsGroup:
    def __init__(self, path: Path) -> None:
        self.path = path

    def joined(self, argv: list[str]) -> list[str]:
        """`argv` run by a shell that first writes its own pid into the group, then execs it:
        the pid is the same, so the run and all it starts are in the group. A shell, not a
        preexec function, since the hosts have threads (a preexec between fork and exec is not
        safe there); a write that fails ends the shell before anything of `argv` ran."""
        joins = 'echo $$ > "$0" && exec "$@"'
        return ["/bin/sh", "-c", joins, str(self.path / "cgroup.procs"), *argv]

    def reached(self) -> bool:
        """Whether a fork of the run was refused for the limit (pids.events' `max` count)."""
        try:
            said = (self.path / "pids.events").read_text()
        except OSError:
            return False
        counts = dict(line.split(None, 1) for line in said.splitlines() if " " in line)
        return counts.get("max", "0").strip() not in ("", "0")

    def end(self, patience: float = 5.0) -> None:
        """Kill everything left in the group and remove it. No fork succeeds once pids.max is 0,
        so the kills are not outrun by what they kill."""
        with contextlib.suppress(OSError):
            (self.path / "pids.max").write_text("0")
        with contextlib.suppress(OSError):
            (self.path / "cgroup.kill").write_text("1")  # v2 on Linux 5.14 and later
        until = time.monotonic() + patience
        while True:
            pids = _pids(self.path / "cgroup.procs")
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                # Busy while its killed processes are still exiting (or not yet reaped). An
                # empty group left behind at pids.max 0 holds nothing and starts nothing.
                if time.monotonic() > until:
                    return
            time.sleep(0.01)


def create(
    limit: int, root: Path | None = None, membership: Path | None = None
) -> PidsGroup | None:
    """A new pids group with `limit` as its pids.max, or None where none can be made here.
    `root`: where the cgroup hierarchies are mounted; `membership`: what names this process's
    groups in them (/proc/self/cgroup's format)."""
    parent = _parent(root or CGROUPS, membership or MEMBERSHIP)
    if parent is None:
        return None
    path = parent / f"minutes-sandbox-{os.getpid()}-{next(_numbers)}"
    try:
        path.mkdir()
    except OSError:
        return None
    try:
        (path / "pids.max").write_text(str(limit))
    except OSError:
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return PidsGroup(path)


def _parent(root: Path, membership: Path) -> Path | None:
    """The pids group this process is in, where children of it can be made."""
    own = _own_groups(membership)
    v1 = root / "pids"
    if "pids" in own and (v1 / "cgroup.procs").exists():
        place = v1 / own["pids"].lstrip("/")
        return place if os.access(place, os.W_OK) else None
    controllers = root / "cgroup.controllers"
    if "" not in own or not controllers.exists():
        return None
    with contextlib.suppress(OSError):
        if "pids" not in controllers.read_text().split():
            return None
        place = root / own[""].lstrip("/")
        enabled = place / "cgroup.subtree_control"
        if "pids" not in enabled.read_text().split():
            # Refused (EBUSY) for a group with processes of its own other than the root: v2
            # gives controllers only to the children of groups without processes.
            enabled.write_text("+pids")
        return place if os.access(place, os.W_OK) else None
    return None


def _own_groups(membership: Path) -> dict[str, str]:
    """This process's group in each hierarchy: controller (v2's: "") -> path."""
    groups: dict[str, str] = {}
    with contextlib.suppress(OSError, ValueError):
        for line in membership.read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(","):
                groups[name] = path
    return groups


def _pids(procs: Path) -> list[int]:
    try:
        return [int(line) for line in procs.read_text().split()]
    except (OSError, ValueError):
        return []
