"""What the triage team needs from its host: a tool surface (the MCP servers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from runtime.tools import Tool


class Surface(Protocol):
    """The tools of the run's servers, named `server.tool` (`runtime.mcp.client.McpSurface`)."""

    def tools(self) -> list[Tool]: ...

    def call(self, name: str, args: dict[str, Any]) -> Any: ...

    def degraded(self) -> dict[str, str]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class TriageServices:
    """Given in `Services.provided`: `mcp` opens the tool surface a flight uses (the workers
    lend one shared per process). None: the team's three servers, started for the flight
    (`teams.triage.surface`)."""

    mcp: Callable[[], Surface] | None = None
