"""Each of the team's MCP servers starts as surface.py starts it without importing a module of
the project: started as `python -m teams.triage.servers.NAME`, it imported the packages `teams`
and `teams.triage` first (every team, the harness, the MCP client), ~0.4 s of a server's ~1.0 s
start, three servers a triage run, for nothing a server uses. The server runs as started, on its
stdin closed (the end of its session), with `-X importtime` saying what it imported."""

from __future__ import annotations

import subprocess

import pytest

from teams.triage.surface import NAMES, support_servers

PROJECT = ("teams", "runtime", "tasks", "journal_store", "config", "services", "tests")


@pytest.mark.parametrize("server", support_servers(), ids=NAMES)
def test_a_server_starts_on_the_standard_library_and_the_sdk_alone(server, tmp_path):
    executable, *args = server.command
    done = subprocess.run(
        [executable, "-X", "importtime", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=server.cwd,
        env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), **server.env},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = [
        line.rpartition("|")[2].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    ]
    assert "mcp.server.mcpserver" in imported  # the server did start
    assert [name for name in imported if name.split(".")[0] in PROJECT] == []
