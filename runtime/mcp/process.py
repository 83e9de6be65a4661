"""An MCP server's process, as the surface keeps it.

The SDK starts a server itself (`mcp.client.stdio`) and hands nobody its process, so a start
that failed left it to the SDK's gentle shutdown (close its stdin, 2 s, SIGTERM, 2 s, SIGKILL),
which came after the surface had said the start failed: a server that ignores both was still
running then, for 4 s more. Its one way in is the module's spawning function, which it looks up
as it starts each server; it is replaced here, once, by one that starts the server as the SDK's
did and keeps its process in the connection's `Owner` (a context variable of the connection's
task; where there is none, it does only what the SDK's did). `Owner.kill` ends it at once
(SIGKILL to its group), where a start has failed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TextIO

from mcp.client import stdio


class Owner:
    """One connection's server process, as the surface keeps it: `what` names it in a refusal."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.process: Any = None  # the SDK's (anyio's) process, once started

    def kill(self) -> None:
        """SIGKILL to its process group, if it was started and is not reaped yet (its pid is
        not another's)."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)


owner: ContextVar[Owner | None] = ContextVar("mcp_process_owner", default=None)
_sdk_spawn = stdio._create_platform_compatible_process


async def _spawn(
    command: str,
    args: list[str],
    env: dict[str, str] | None = None,
    errlog: TextIO = sys.stderr,
    cwd: Path | str | None = None,
) -> Any:
    own = owner.get()
    if own is None:
        return await _sdk_spawn(command, args, env, errlog, cwd)
    process: Any = await _sdk_spawn(command, args, env, errlog, cwd)  # anyio's, on POSIX
    own.process = process
    return process


stdio._create_platform_compatible_process = _spawn
