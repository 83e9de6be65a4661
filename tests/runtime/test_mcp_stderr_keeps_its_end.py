"""An MCP server's stderr is drained as it comes and only its end kept (TAIL_BYTES), however
much it writes; the end is still quoted when the server dies."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.mcp.client import McpSurface
from runtime.mcp.server import McpServer, ServerUnreachable
from runtime.mcp.stderr import TAIL_BYTES, StderrTail

SERVER = Path(__file__).with_name("hostile_mcp_server.py")
WRITES = "import sys\nfor _ in range(8):\n    sys.stderr.write('E' * (1 << 20))\nsys.stderr.write('\\nthe last words\\n')\n"


def large_open_files(than: int) -> list[str]:
    """What this process holds open that is a regular file larger than `than` bytes."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            info = os.fstat(int(fd))
            if stat.S_ISREG(info.st_mode) and info.st_size > than:
                found.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the listing's own descriptor, gone
            continue
    return found


def test_only_the_end_of_what_a_process_writes_is_kept():
    tail = StderrTail("writer")
    subprocess.run([sys.executable, "-c", WRITES], stderr=tail.writer, check=True)
    tail.release()
    kept = tail.text(settle=30)
    assert kept.endswith("\nthe last words\n")
    assert len(kept.encode()) <= TAIL_BYTES


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads /proc for open files")
def test_a_server_that_writes_64_mib_to_stderr_is_quoted_by_its_last_words(tmp_path):
    listing = tmp_path / "talker.json"
    listing.write_text(
        json.dumps({"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "stderr_mib": 64})
    )
    server = McpServer("talker", (sys.executable, str(SERVER), str(listing)))
    with McpSurface([server], call_timeout=30) as surface:
        with pytest.raises(ServerUnreachable, match="the last words") as died:
            surface.call("talker.t", {})
        assert len(str(died.value)) < 1_000
        # It was kept in a temporary file for the life of the surface, read back whole.
        assert large_open_files(than=16 << 20) == []
