"""Running code that agents wrote: inside bubblewrap, with a minimal environment and limits.

Agent-written tests are untrusted programs. They run with an allow-listed environment (no model
keys, no database URL, nothing of the worker's), under resource limits (CPU time, address
space, file size, processes, bytes and files added to the directories it may write, captured
output) and, unless the operator opted out explicitly, inside a bubblewrap sandbox: no network,
only the Python installation and the system's /usr readable, write access to the workspace (its
.git read-only), the run's scratch directory (pytest's report and temporary files, HOME and
TMPDIR) and a small /dev/shm only.

A sandbox that is required but cannot start is a refusal (`SandboxUnavailable`, a tool
failure the agent and the operator both see), never a quiet run without it. This module takes
its options as arguments: the hosts (the workers, the command line) decide them. A run is one
of this process's children (runtime/children.py): a holder whose lease was lost kills it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from runtime import children, sandbox_cgroup
from runtime.sandbox_disk import FILES, TICK, DiskWatch
from runtime.tools import ToolFailure, ToolTimeout

log = logging.getLogger("minutes.sandbox")

INSTALL_HINT = (
    "install it (Debian/Ubuntu: apt-get install bubblewrap), or, knowing that agent code then "
    "runs with the worker's rights, opt out explicitly (MINUTES_SANDBOX=off for the workers, "
    "--no-sandbox on the command line)"
)
# The system's own directories a Python process may need to read; nothing else of the host
# (no /etc, /home, /root, /var, no other workspaces) is visible inside.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
# The sandbox's /tmp is read-only (see `confinement`): its size bounds what it could hold in
# memory should that change; mount points bwrap makes in it take a few inodes, no data.
TMP_BYTES = 1 << 20


class SandboxUnavailable(ToolFailure):
    """The sandbox is required and cannot run here; the message says how to fix that."""


class LimitReached(ToolFailure):
    """The run went past one of its limits (processes, disk) and was ended for it."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one run of agent code.

    `processes` is the pids.max of a cgroup of the run's own (runtime/sandbox_cgroup.py) where
    one can be made: every process and thread of the run counts, root's too, and a run that
    reaches it is ended (`LimitReached`). Elsewhere it is the kernel's RLIMIT_NPROC, which
    counts every thread of the user, so it is applied as headroom over what the user already
    runs; the kernel does not apply that to root, and a run as root with no cgroup has no
    process limit (`unenforced` says so).

    `disk_bytes` bounds what the run adds to the workspace and the scratch directory together
    (runtime/sandbox_disk.py), measured while it runs: one past it is ended (`LimitReached`).
    `files` bounds how many files (directories and links too: inodes) it adds there, the same
    way: empty files take no bytes, and millions of them take every inode of the filesystem.
    """

    cpu_seconds: int = 120
    memory_bytes: int = 2 << 30  # address space
    file_bytes: int = 64 << 20  # any one file written
    # The sandbox's /dev/shm: memory, which the address-space limit does not count. Enough for
    # multiprocessing's semaphores and a test's small shared arrays.
    shm_bytes: int = 16 << 20
    processes: int = 256
    disk_bytes: int = 512 << 20
    files: int = 100_000  # a big worktree's worth; a run of tests makes far fewer
    output_bytes: int = 1 << 20  # captured stdout and stderr; the rest is read and dropped


@dataclass(frozen=True)
class Sandbox:
    """How agent code runs. `required=False` is the operator's explicit opt-out of bubblewrap
    (the environment and the limits still apply)."""

    required: bool = True
    bwrap: str = "bwrap"
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class Finished:
    code: int  # the exit status, or 128 + the signal that ended it
    output: str
    truncated: bool


def run(
    argv: list[str],
    *,
    workspace: Path,
    scratch: Path,
    timeout: float,
    sandbox: Sandbox,
    label: str = "the run",
) -> Finished:
    """Run `argv` in `workspace` as agent code; its output, capped. Raises ToolTimeout or
    LimitReached (after killing everything it started), SandboxUnavailable, or children.Ended
    (its holder's lease was lost: it was killed, or not started)."""
    workspace, scratch = workspace.resolve(), scratch.resolve()
    inner = confinement(sandbox, workspace, scratch) if sandbox.required else []
    limits = _limits(sandbox.limits)
    places = {"its workspace": workspace, "its scratch directory (HOME, TMPDIR)": scratch}
    bound = sandbox.limits
    disk = DiskWatch(places, bound.disk_bytes, bound.files, frozenset({workspace / ".git"}))
    info, told = os.pipe() if inner else (-1, -1)
    if inner:
        # bubblewrap says there the pid of the sandbox's first process: a kill waits for it
        # to be gone, and with it everything in its pid namespace (see `_kill`).
        inner = [inner[0], "--info-fd", str(told), *inner[1:]]
    command = [*limits, *inner, *argv]
    group = _pids_group(sandbox.limits)  # nothing raises between it and the `try`
    if group is not None:
        command = group.joined(command)
    watch = _watch(sandbox.limits, label, group, disk)

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            command,
            cwd=workspace,
            env=environment(sandbox, scratch),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(told,) if inner else (),
        )

    def first() -> int | None:
        return _first_pid(info) if inner else None

    try:
        with children.started(label, start) as proc:
            return _outcome(proc, timeout, sandbox.limits.output_bytes, label, first, watch)
    except children.Ended:
        # Killed with its process group (children.end): a sandboxed run's pid namespace
        # dies with bwrap, its group leader; as after a timeout, not told before it is gone.
        pid = first()
        if pid is not None:
            _gone(pid)
        raise
    finally:
        if group is not None:
            group.end()  # what a run left (one without the sandbox may have left its session)
        if inner:
            os.close(info)
            os.close(told)


def _outcome(
    proc: subprocess.Popen[bytes],
    timeout: float,
    cap: int,
    label: str,
    first: Callable[[], int | None],
    watch: Callable[[bool], str | None],
) -> Finished:
    """What the run said (its first `cap` bytes) and how it ended. `watch` is asked at least
    every TICK while it runs, and once after, whether it went past a limit (what to say)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    kept = bytearray()
    truncated = False
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                _stop_if(watch(False))
                if not selector.select(min(left, TICK)):
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                room = cap - len(kept)
                truncated = truncated or len(chunk) > room
                kept += chunk[: max(room, 0)]  # the rest is read and dropped: no blocked writer
        while (code := proc.poll()) is None:  # its output closed; it may not have ended yet
            if time.monotonic() >= deadline:
                raise TimeoutError
            _stop_if(watch(False))
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(TICK)
        _stop_if(watch(True))
    except TimeoutError:
        _kill(proc, first())
        raise ToolTimeout(f"{label} gave no answer within {timeout:g} s") from None
    except LimitReached:
        _kill(proc, first())
        raise
    finally:
        proc.stdout.close()
    text = kept.decode("utf-8", errors="replace")
    if truncated:
        text += f"\n[output cut at {cap} bytes]"
    return Finished(code if code >= 0 else 128 - code, text, truncated)


def _stop_if(said: str | None) -> None:
    if said is not None:
        raise LimitReached(said)


def _kill(proc: subprocess.Popen[bytes], first: int | None = None) -> None:
    # The sandbox's processes live in their own pid namespace, set to die with bwrap; without
    # the sandbox, the run's process group is what there is to end.
    with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    if first is not None:
        _gone(first)


def _first_pid(info: int) -> int | None:
    """The sandbox's first process, as bubblewrap told it (None if it did not, yet)."""
    os.set_blocking(info, False)
    try:
        said = json.loads(os.read(info, 4096) or b"{}")
    except (BlockingIOError, ValueError):
        return None
    pid = said.get("child-pid") if isinstance(said, dict) else None
    return pid if isinstance(pid, int) and pid > 0 else None


def _gone(pid: int, patience: float = 5.0) -> None:
    """Wait until the sandbox's first process has ended. bwrap's death kills it (it dies with
    its parent), and the kernel ends a pid namespace's other processes before its first one is
    done, so then nothing the run started is left: bwrap itself is reaped before that, and a
    process it left could still write for a moment after the call had returned."""
    until = time.monotonic() + patience
    while time.monotonic() < until:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return
        if state in ("Z", "X"):
            return  # ended, and waiting for a reaper that is not us
        time.sleep(0.01)


# --- the limits watched while it runs ---------------------------------------------------------

NO_PROCESS_LIMIT = (
    "the process limit (Limits.processes) is not enforced here: agent code runs as root, which "
    "RLIMIT_NPROC does not bind, and no pids cgroup could be made (cgroup v1's "
    "/sys/fs/cgroup/pids, or v2's with the pids controller, writable by this process)"
)
_said: list[str] = []  # what was logged once already
_last = [""]  # what the last run's limits lacked ("" none): a group not made once may be later


def _pids_group(limits: Limits) -> sandbox_cgroup.PidsGroup | None:
    group = sandbox_cgroup.create(limits.processes)
    _last[0] = NO_PROCESS_LIMIT if group is None and os.getuid() == 0 else ""
    if _last[0] and not _said:
        _said.append(_last[0])
        log.warning("%s; a fork bomb in an agent's test can take every pid of the host", _last[0])
    return group


def unenforced() -> str:
    """What limit of agent code was not enforced on this host ("" if all were), as the last run
    found: the tool results say it, beside what the run answered. It was the first run's that
    found one missing, said after every run since, however many had their group."""
    return _last[0]


def _watch(
    limits: Limits,
    label: str,
    group: sandbox_cgroup.PidsGroup | None,
    disk: DiskWatch,
) -> Callable[[bool], str | None]:
    """What ends the run early: a fork its pids group refused, or more than `disk_bytes` or
    `files` added to the directories it may write (runtime/sandbox_disk.py)."""

    def watch(last: bool) -> str | None:
        if group is not None and group.reached():
            return (
                f"{label} was ended: it reached its limit of {limits.processes} processes and "
                "threads (Limits.processes; a fork bomb?)"
            )
        past = disk.over(last)
        if past is None:
            return None
        limit, place = past
        if limit == FILES:
            return (
                f"{label} was ended: it made more than {limits.files:,} files and directories "
                f"(Limits.files) in {place}"
            )
        return (
            f"{label} was ended: it wrote more than {limits.disk_bytes:,} bytes "
            f"(Limits.disk_bytes) into {place}"
        )

    return watch


# --- the pieces of the command -----------------------------------------------------------------


def environment(sandbox: Sandbox, scratch: Path) -> dict[str, str]:
    """The whole environment agent code sees: an allow-list, never the worker's own."""
    home = scratch / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": f"{Path(sys.executable).parent}:{SANDBOX_PATH}",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "LOGNAME": "minutes-agent",
        "USER": "minutes-agent",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        # The workspace is somebody else's repository: the plugins installed beside Minutes
        # (pytest-django, hypothesis, ...) are not its plugins. Not loading them is also 5x
        # faster per run (0.9 s -> 0.18 s here).
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


def _limits(limits: Limits) -> list[str]:
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise SandboxUnavailable(
            "prlimit (util-linux) is needed to limit agent code's resources and was not found"
        )
    command = [
        prlimit,
        f"--cpu={limits.cpu_seconds}",
        f"--as={limits.memory_bytes}",
        f"--fsize={limits.file_bytes}",
        "--core=0",
    ]
    if os.getuid() != 0:
        command.append(f"--nproc={_threads_of_user() + limits.processes}")
    return [*command, "--"]


def _threads_of_user() -> int:
    """How many threads the real user runs now (what RLIMIT_NPROC counts)."""
    uid, count = str(os.getuid()), 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":", 1) for line in status.read_text().splitlines() if ":" in line
            )
        except OSError:
            continue  # it ended while we looked
        if fields.get("Uid", "").split()[:1] == [uid]:
            count += int(fields.get("Threads", "1"))
    return count


def confinement(sandbox: Sandbox, workspace: Path, scratch: Path) -> list[str]:
    """bubblewrap's arguments: what the sandbox sees, and the `--` that ends them."""
    bwrap = shutil.which(sandbox.bwrap)
    if bwrap is None:
        raise SandboxUnavailable(
            f"bubblewrap is required to run agent code and {sandbox.bwrap!r} was not found: "
            + INSTALL_HINT
        )
    command = [bwrap, "--unshare-all", "--die-with-parent", "--new-session"]
    if os.getuid() == 0:
        command += ["--cap-drop", "ALL"]  # root keeps its capabilities in a sandbox otherwise
    command += _system_view()
    # The empty /tmp first: a mount made later on top of it would hide anything bound there
    # before it (a virtualenv in /tmp, as a CI clone may have). bwrap's /dev and its /dev/shm
    # are one tmpfs sized at half the host's RAM, whose pages no rlimit counts: /dev is made
    # read-only below, and /dev/shm a tmpfs of its own with a size.
    command += ["--dev", "/dev", "--size", str(sandbox.limits.shm_bytes), "--tmpfs", "/dev/shm"]
    command += ["--proc", "/proc", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    for root in python_roots():
        command += ["--ro-bind", root, root]
    command += ["--bind", str(scratch), str(scratch), "--bind", str(workspace), str(workspace)]
    if os.path.lexists(workspace / ".git"):
        # git runs outside the sandbox, on what this names: hooks or config planted in it would
        # run with the worker's rights at the harness's next commit. A writer's worktree has a
        # file here, pointing at its repository, and a test rewriting that pointer to one of its
        # own making would do the same; so directory or file, it is read-only.
        command += ["--ro-bind", str(workspace / ".git"), str(workspace / ".git")]
    # Mount points bwrap had to make live in its own root, /tmp and /dev: all read-only, so
    # nothing is written anywhere but the workspace, the scratch directory and the bounded
    # /dev/shm (the devices bound into /dev are mounts of their own: /dev/null still takes
    # writes).
    command += ["--remount-ro", "/dev", "--remount-ro", "/tmp", "--remount-ro", "/"]
    command += ["--chdir", str(workspace), "--"]
    _probe(bwrap, command)
    return command


def _system_view() -> list[str]:
    args = []
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def python_roots() -> list[str]:
    """The directories the running Python (and its virtualenv) lives in, outermost only."""
    found = set()
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        found.add(os.path.abspath(prefix))
        found.add(os.path.realpath(prefix))
    found.add(os.path.dirname(os.path.realpath(sys.executable)))
    roots: list[str] = []
    for path in sorted(found, key=len):
        if path == "/" or any(path == r or path.startswith(r + os.sep) for r in roots):
            continue
        if not any(path == s or path.startswith(s + os.sep) for s in SYSTEM):
            roots.append(path)
    return sorted(roots)


_working: set[tuple[str, ...]] = set()


def _probe(bwrap: str, command: list[str]) -> None:
    """Start the sandbox once with `true`, so a sandbox the kernel refuses (no user namespaces,
    a container's seccomp profile) is reported as such, not as a test run that failed."""
    key = tuple(command[: command.index("--bind")])
    if key in _working:
        return
    probe = subprocess.run(
        [*key, "--", "true"],
        env={"PATH": SANDBOX_PATH},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    if probe.returncode != 0:
        said = (probe.stderr or probe.stdout).strip()[:500]
        # Some refusals print nothing (a seccomp profile's, a stand-in's): the status is all.
        said = said or f"it exited with status {probe.returncode} and said nothing"
        raise SandboxUnavailable(
            f"bubblewrap ({bwrap}) cannot start a sandbox here: {said}; " + INSTALL_HINT
        )
    _working.add(key)
