"""`python -m runtime` reads the teams' registry, and with it every team's package; the triage
team's imported the MCP client, and with it the MCP SDK (~0.5 s of a ~1.3 s start), at every
start of the command line: a solo flight, a replay, --help. The SDK is imported where a surface
of servers is started (teams/triage/surface.py), and a worker imports it before it forks its
pool (services/specialists.py)."""

from __future__ import annotations

import subprocess
import sys


def imported(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [
        line.rpartition("|")[2].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    ]


def test_the_command_line_reads_every_team_without_the_mcp_sdk():
    names = imported("-m", "runtime", "--help")
    assert "teams.triage.harness" in names  # the registry was read, the triage team with it
    assert [name for name in names if name == "mcp" or name.startswith("mcp.")] == []


def test_the_specialists_worker_module_has_the_mcp_client_before_a_fork():
    names = imported("-c", "import teams.triage.surface as s; assert s.default_surface")
    assert "runtime.mcp.client" not in names
    names = imported("-c", "import django; django.setup(); import services.specialists")
    assert "runtime.mcp.client" in names
