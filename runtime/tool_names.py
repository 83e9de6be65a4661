"""How a tool is named where a model reads and writes it: the rule a name in a reply must meet,
and the name a namespaced tool travels under. The MCP surface checks its servers' listings by
the same rules the model client applies to replies, so they live here, outside the client."""

from __future__ import annotations

import re

# A tool name in a reply: the protocol's letters, digits, _ and -, and the dot of our
# namespaced tools (a model may write `orders.lookup_order` as it read it); up to 128, MCP's
# length for a name, as a server's tool is named with its server's name before it. Any other
# name is no tool's: one holding terminal controls was printed raw in findings.
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
NAME_CHARS = 80  # how much of a name that is not one to quote

# Built-in tools named in a namespace, as an MCP server's tools are (`server.tool`): a server
# named for one of these namespaces would offer a tool named as the built-in, and a call meant
# for one would reach the other, so runtime/mcp/server.py refuses such a server's name.
BUILT_IN_NAMESPACED = ("team.delegate",)  # teams/triage/onward.py, the hand-off's tool


def wire_name(name: str) -> str:
    """A tool name the protocol accepts (letters, digits, _ and -): namespaced tools
    (`orders.lookup_order`) travel as `orders__lookup_order` and come back as themselves."""
    return name.replace(".", "__")
