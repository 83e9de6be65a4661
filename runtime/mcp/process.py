"""An MCP server's process ends with what started it.

The SDK starts a server itself (`mcp.client.stdio`), in a session of its own, and hands nobody
its process: the lease's end (runtime/children.py) could not kill it, a start that failed left
it to the SDK's gentle shutdown (close its stdin, 2 s, SIGTERM, 2 s, SIGKILL) after the surface
had said it failed, and a worker killed with SIGKILL left a server that ignores the end of its
stdin running for ever. Its one way in is the module's spawning function, which it looks up
as it starts each server; it is replaced here, once, by one that does as the SDK's did where
no surface asked for more (`Owner`, a context variable of the connection's task):

- the server is counted among the children of the surface's holding (`children.join`), so a
  lost lease kills its process group, and it is not started at all under a lease already lost
  (not a surface a worker's runs share: no one step's lease is its);
- on Linux it is started through a few lines of Python that ask the kernel to SIGKILL it when
  its parent thread ends (prctl PR_SET_PDEATHSIG) and then exec the server, which keeps the
  setting. The SDK spawns on the surface's event loop thread, which lives until the surface has
  stopped its servers, so the signal comes with the worker's death and not before. A worker
  that died before the prctl is caught by the parent pid the wrapper is given. The wrapper's
  start costs ~35 ms a server (`true` through it: 36.9 ms, alone 2.6), against the ~700 ms a
  Python server takes to import its SDK. The signal reaches the server alone: what it started
  in turn is in its process group, which the surface's close and a lost lease kill;
- `Owner.kill` ends it at once (SIGKILL to its group), where a start has failed.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import signal
import sys
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp.client import stdio

from runtime import children

# Run as `python -I -S -c WATCHED PARENT_PID COMMAND ARGS...`: 1 is PR_SET_PDEATHSIG.
WATCHED = (
    "import ctypes, os, signal, sys\n"
    "if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0):\n"
    "    sys.exit('prctl(PR_SET_PDEATHSIG): ' + os.strerror(ctypes.get_errno()))\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit('its worker ended before it started')\n"
    "try:\n"
    "    os.execvp(sys.argv[2], sys.argv[2:])\n"
    "except OSError as exc:\n"
    "    sys.exit(f'{sys.argv[2]}: {exc.strerror}')\n"
)
PDEATHSIG = sys.platform.startswith("linux")
REAP_TIMEOUT = 5.0


class Owner:
    """One connection's server process, as the surface keeps it: `what` names it in a refusal."""

    def __init__(self, what: str, counted: bool = True) -> None:
        self.what = what
        self.counted = counted  # among the children of the holding (not a shared surface's)
        self.process: Any = None  # the SDK's (anyio's) process, once started

    def kill(self) -> None:
        """SIGKILL to its process group, if it was started and is not reaped yet (its pid is
        not another's)."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)

    def exited(self) -> bool:
        return self.process is not None and self.process.returncode is not None

    def release(self) -> bool:
        """No longer counted among the holding's children; whether a lost lease killed it."""
        return self.counted and self.process is not None and children.leave(self.process)


owner: ContextVar[Owner | None] = ContextVar("mcp_process_owner", default=None)
# The SDK's private spawning function. Another SDK release may name it otherwise: then servers
# start as the SDK starts them (not tied to their owner), said once in the log, rather than no
# worker importing this; tests/runtime/test_mcp_servers_end_with_their_owner.py asks HOOKED.
_sdk_spawn = getattr(stdio, "_create_platform_compatible_process", None)
HOOKED = _sdk_spawn is not None


async def _spawn(
    command: str,
    args: list[str],
    env: dict[str, str] | None = None,
    errlog: TextIO = sys.stderr,
    cwd: Path | str | None = None,
) -> Any:
    assert _sdk_spawn is not None  # installed only where found
    own = owner.get()
    if own is None:
        return await _sdk_spawn(command, args, env, errlog, cwd)
    if own.counted:
        children.check(own.what)
    if PDEATHSIG:
        _found(command, env, cwd)  # the wrapper always starts: say what the SDK would have
        args = ["-I", "-S", "-c", WATCHED, str(os.getpid()), command, *args]
        command = sys.executable
    process: Any = await _sdk_spawn(command, args, env, errlog, cwd)  # anyio's, on POSIX
    try:
        if own.counted:
            children.join(own.what, process)
    except children.Ended:  # killed by join: reaped here, as the SDK never had it
        with anyio.move_on_after(REAP_TIMEOUT), anyio.CancelScope(shield=True):
            await process.aclose()
        raise
    own.process = process
    return process


def _found(command: str, env: dict[str, str] | None, cwd: Path | str | None) -> None:
    """FileNotFoundError for a command that cannot be run, as starting it would have raised."""
    if os.sep in command:
        there = os.path.join(cwd or "", command)
        found = os.path.isfile(there) and os.access(there, os.X_OK)
    else:
        found = shutil.which(command, path=(env or {}).get("PATH", os.defpath)) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)


if HOOKED:
    stdio._create_platform_compatible_process = _spawn
else:
    logging.getLogger(__name__).warning(
        "this MCP SDK has no mcp.client.stdio._create_platform_compatible_process: its "
        "servers start as the SDK starts them, and a lost lease or a killed worker does not "
        "end them"
    )
