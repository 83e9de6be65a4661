"""An MCP server as the client sees it: how to start it, how it is doing, how a call fails.

A call never raises through the agent loop: each failure is a `McpFailure` (a `ToolFailure`)
naming the server and the tool, which `runtime.tools.execute` turns into an observation. The
failure types are replayable (`runtime.errors`): a replayed run raises them again as themselves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from runtime import errors
from runtime.tool_names import BUILT_IN_NAMESPACED
from runtime.tools import ToolFailure, ToolTimeout


@errors.replayable
class McpFailure(ToolFailure):
    """An MCP tool call that produced no result; the message names the server and the tool."""


@errors.replayable
class ServerDegraded(McpFailure):
    """The server was marked degraded earlier; the call was refused without reaching it."""


@errors.replayable
class ServerUnreachable(McpFailure):
    """The connection to the server is gone (its process died or closed its pipes)."""


@errors.replayable
class McpToolError(McpFailure):
    """The server answered with an error result, or an MCP error, instead of a result."""


@errors.replayable
class McpTimeout(McpFailure, ToolTimeout):
    """The server gave no answer in time."""


# A server's tools travel to a model as `server__tool`, a `.` in the tool's name as `__` too
# (tool_names.wire_name): a server name with no `__` in it and no `_` at its ends is the part
# of the wire name before the first `__`, so no two servers' tools can be named alike there,
# and a listing is checked for its own (runtime/mcp/listing.py).
SERVER_NAME = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")


@dataclass(frozen=True)
class McpServer:
    """How to start one MCP server over stdio.

    `env` is added to the SDK's minimal default environment (PATH, HOME, ...), not to ours:
    servers do not inherit the caller's secrets by accident. `read_only` is the operator's word
    that the server's tools have no side effects, so the loop may retry them; tool annotations
    from the server are only hints, and the MCP spec says not to decide on them.
    """

    name: str
    command: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    read_only: bool = False

    def __post_init__(self) -> None:
        if not SERVER_NAME.fullmatch(self.name):
            raise ValueError(
                "a server name is letters, digits, '-' and '_', with no '__' and no '_' at its "
                f"start or end: {self.name!r}"
            )
        for built_in in BUILT_IN_NAMESPACED:
            namespace, _, tool = built_in.partition(".")
            # Alike whatever the case: a model that read one may well write the other.
            if self.name.casefold() == namespace.casefold():
                raise ValueError(
                    f"server name {self.name!r} is the namespace of the built-in tool "
                    f"{built_in}: a tool {tool!r} it listed would be named as that tool; "
                    "give the server another name"
                )
        if not self.command:
            raise ValueError(f"server {self.name!r} has an empty command")
        object.__setattr__(self, "command", tuple(self.command))


@dataclass(frozen=True)
class ServerHealth:
    name: str
    reason: str | None  # why the server is degraded; None when it is healthy
    tools: tuple[str, ...]  # qualified names
    calls: int  # calls sent to the server (refused ones are not sent)
    consecutive_failures: int
    # tools it listed that were left out (qualified name -> why): runtime/mcp/listing.py
    left_out: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.reason is None
