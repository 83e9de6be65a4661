"""A line of a server's stdout that is not a JSON-RPC message breaks the protocol: the server is
degraded at once, the reason quoting (escaped, cut short) what it wrote, and the call waiting on
it fails so. The SDK logged such a line and went on, and the call waited out its timeout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from runtime.mcp.client import McpSurface
from runtime.mcp.server import McpServer, ServerUnreachable

pytestmark = pytest.mark.slow

SERVER = Path(__file__).with_name("hostile_mcp_server.py")
TOOLS = [{"name": "t", "inputSchema": {"type": "object"}}]


def hostile(tmp_path: Path, name: str, told: dict) -> McpServer:
    listing = tmp_path / f"{name}.json"
    listing.write_text(json.dumps(told))
    return McpServer(name, (sys.executable, str(SERVER), str(listing)))


def test_a_line_that_is_not_json_fails_the_waiting_call_and_degrades_the_server(tmp_path):
    junk = "Loading model \x1b[31mweights\x1b[0m " + "." * 500
    chatty = hostile(tmp_path, "chatty", {"tools": TOOLS, "stdout_junk": junk})
    quiet = hostile(tmp_path, "quiet", {"tools": TOOLS})
    # A timeout the protocol's break ends the call well before: without it the call waited it out.
    with McpSurface([chatty, quiet], call_timeout=60) as surface:
        with pytest.raises(ServerUnreachable, match=r"chatty\.t: server 'chatty'") as ended:
            surface.call("chatty.t", {})
        said = str(ended.value)
        assert "not JSON" in said and r"'Loading model \x1b[31mweights\x1b[0m ...." in said
        assert "\x1b" not in said and "." * 300 not in said  # escaped, and cut short
        assert said.endswith(surface.degraded()["chatty"])
        assert surface.call("quiet.t", {}) == "called t"  # its neighbour answers still


def test_a_json_line_that_is_no_json_rpc_message_breaks_the_protocol_too(tmp_path):
    odd = hostile(tmp_path, "odd", {"tools": TOOLS, "stdout_junk": '{"progress": 0.5}'})
    with McpSurface([odd], call_timeout=60) as surface:
        with pytest.raises(ServerUnreachable, match="no JSON-RPC message"):
            surface.call("odd.t", {})
        assert """'{"progress": 0.5}'""" in surface.degraded()["odd"]
