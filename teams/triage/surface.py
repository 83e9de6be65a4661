"""The team's MCP servers (`teams.triage.servers`) and the surface that starts them.

Nothing here reads the environment: where the orders server keeps its book is passed in (the
command line: beside the run's workspace; the workers: from the project's settings).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from runtime.mcp.server import McpServer

if TYPE_CHECKING:
    from runtime.mcp.client import McpSurface

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent / "servers"
NAMES = ("orders", "kb", "policy")


def support_servers(names: Iterable[str] = NAMES, book: Path | None = None) -> list[McpServer]:
    """The team's servers, run with this interpreter; the orders server keeps its book of
    credits and labels at `book` (default: one file in the temporary directory)."""
    return [
        McpServer(
            name,
            (
                # By its file, not `-m teams.triage.servers.NAME`: that imported the packages
                # `teams` and `teams.triage` first, every team, the harness and the MCP client
                # (~0.4 s of a server's ~1.0 s start) for a server that uses none of them. -P:
                # nothing put on sys.path for the script (its directory holds kb, orders and
                # policy, which would shadow any such module of the environment's); a server
                # imports the standard library and the MCP SDK only.
                sys.executable,
                "-P",
                str(SERVERS / f"{name}.py"),
                *(("--book", str(book)) if name == "orders" and book is not None else ()),
            ),
            # The project's root, as ever: where a server's relative paths are read from.
            cwd=str(PROJECT_ROOT),
            # orders also issues credits and labels: idempotent on their keys, but not
            # something a loop should repeat on its own
            read_only=name != "orders",
        )
        for name in names
    ]


def default_surface(book: Path | None = None, shared: bool = False) -> McpSurface:
    """The three servers, started together (`shared` by a worker process's runs: McpSurface)."""
    # Imported here, where servers are started: the client imports the MCP SDK (~0.5 s), and
    # the teams' registry imports this module, so every `python -m runtime` (a solo flight, a
    # replay, --help) and every process that reads the registry paid for it at its start.
    from runtime.mcp.client import McpSurface

    return McpSurface(support_servers(book=book), shared=shared)
