"""An MCP server's process ends with what started it: a start that fails ends it at once (and
reaps it) before the surface says so, where the SDK's gentle shutdown left a server that
ignores the end of its stdin and SIGTERM running 4 s after (runtime/mcp/process.py)."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from runtime.mcp.client import McpSurface
from runtime.mcp.server import McpServer
from tests.runtime.test_mcp import children as our_children
from tests.runtime.test_mcp import wait_until_gone

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; prctl"),
]

# Neither the end of its stdin nor SIGTERM ends it; it says its pid first, where it is told.
STUBBORN = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        time.sleep(1)
    """
)


def stubborn(name: str, said: Path) -> McpServer:
    return McpServer(name, (sys.executable, "-c", STUBBORN, str(said)))


def alive(pid: int) -> bool:
    """Running: neither gone nor a zombie (an orphan's reaper may be slow to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_server_that_fails_its_start_is_ended_and_reaped_before_the_surface_says_so(tmp_path):
    said = tmp_path / "pid"
    before = set(our_children())
    with McpSurface([stubborn("mute", said)], start_timeout=1.0) as surface:
        assert said.exists()  # it did start
        assert wait_until_gone(set(our_children()) - before, timeout=0) == {}
        assert "no MCP handshake within 1 s" in surface.degraded()["mute"]
