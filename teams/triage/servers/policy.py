"""MCP server `policy`: up, advertising its tools, and failing every call.

Run with `python -P teams/triage/servers/policy.py`. A backend that is down is found at connect
time; one that is up and broken is the realistic case, and the one that shows whether a team
degrades or falls over. Each call raises `ToolError`, which the SDK turns into a tool result
with `isError: true` (the MCP way to say "the tool ran and failed").
"""

from __future__ import annotations

import gc
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

OUTAGE = "policy database unreachable (connection to policy-db:5432 refused)"

server = MCPServer(
    "policy",
    instructions="Refund and returns policy decisions.",
    log_level="WARNING",
)


# Up, it would answer {"order_id", "eligible": true or false, "why"}: the refund saga reads
# `eligible` from the policy specialist's cited call (teams/triage/eligible.py). The docstring
# is the tool's description, which the models read, so it is said here.
@server.tool()
def check_refund_policy(order_id: str, amount_cents: int) -> dict[str, Any]:
    """Say whether a refund of `amount_cents` on an order is within policy, and why."""
    raise ToolError(OUTAGE)


@server.tool()
def policy_for(topic: str) -> dict[str, Any]:
    """The current policy text for a topic such as returns, refunds or shipping."""
    raise ToolError(OUTAGE)


@server.tool()
def record_decision(order_id: str, decision: str, key: str) -> dict[str, Any]:
    """Record a refund decision against the policy (idempotent on `key`)."""
    raise ToolError(OUTAGE)


if __name__ == "__main__":
    server.run("stdio")
    # The session is over: what the process made (the SDK's schemas, some 85,000 objects) is
    # not collected again on the way out, which took ~1 s that its client waited on
    # (servers/__init__.py).
    gc.freeze()
