"""A server's stdout line past lines.MAX_LINE_BYTES ends its connection at once, the server
degraded naming the bound (runtime/mcp/lines.py); the SDK gathered it whole, however long,
and a call waited out its timeout while it did."""

from __future__ import annotations

import codecs
import json
import sys
from pathlib import Path

import pytest

from runtime.mcp import lines
from runtime.mcp.client import McpSurface
from runtime.mcp.server import McpServer, ServerUnreachable

pytestmark = pytest.mark.slow

SERVER = Path(__file__).with_name("hostile_mcp_server.py")
SAID = "longer than 4,194,304 bytes (lines.MAX_LINE_BYTES)"


def hostile(tmp_path: Path, name: str, told: dict) -> McpServer:
    listing = tmp_path / f"{name}.json"
    listing.write_text(json.dumps(told))
    return McpServer(name, (sys.executable, str(SERVER), str(listing)))


def test_a_result_line_past_the_bound_ends_the_call_and_degrades_the_server(tmp_path):
    gush = hostile(
        tmp_path,
        "gush",
        {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "stdout_mib": 64},
    )
    quiet = hostile(
        tmp_path, "quiet", {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    )
    # A timeout the bound ends the call well before: without it the call waited it out.
    with McpSurface([gush, quiet], call_timeout=60) as surface:
        with pytest.raises(ServerUnreachable, match=r"gush\.t: server 'gush'") as ended:
            surface.call("gush.t", {})
        assert SAID in str(ended.value)
        assert SAID in surface.degraded()["gush"]
        assert surface.call("quiet.t", {}) == "called t"  # its neighbour answers still


def test_a_listing_line_past_the_bound_degrades_the_server_at_its_start(tmp_path):
    wordy = [
        {"name": f"t{i}", "description": "d" * (1 << 20), "inputSchema": {"type": "object"}}
        for i in range(5)
    ]
    server = hostile(tmp_path, "wordy", {"tools": wordy})
    with McpSurface([server], start_timeout=60) as surface:
        assert SAID in surface.degraded()["wordy"]
        assert surface.tools() == []


def test_lines_within_the_bound_are_decoded_as_they_come_split():
    passed = []
    watch = lines.Watch(passed.append, limit=8)
    try:
        decoder = codecs.getincrementaldecoder(watch.encoding)()
        text = decoder.decode(b"12345") + decoder.decode(b"678\nab\xc3") + decoder.decode(b"\xa9\n")
        assert text == "12345678\nab\u00e9\n" and passed == []
        assert decoder.decode(b"123456789") == "" and passed == [8]
        assert decoder.decode(b"\nmore\n") == ""  # nothing more once it passed
    finally:
        watch.forget()
