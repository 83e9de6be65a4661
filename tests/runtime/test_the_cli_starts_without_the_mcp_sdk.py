"""`python -m runtime` reads the teams' registry, and with it every team's package; the triage
team's imported the MCP client, and with it the MCP SDK (~0.5 s of a ~1.3 s start), at every
start of the command line: a solo flight, a replay, --help. The SDK is imported where a surface
of servers is started (teams/triage/surface.py), and a worker imports it before it forks its
pool (config/celery.py, at worker_init): not every manage.py command and the web server,
which import services.runs (and with it services/specialists.py), ~1 s a start."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported(*args: str, env: dict[str, str] | None = None) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # A refusal (demo on production settings) is a start too: what it says is checked below.
    assert done.returncode == 0 or "demo is for a development machine" in done.stderr, done.stderr
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
    worker = "import django; django.setup(); import services.specialists"
    assert "runtime.mcp.client" not in imported("-c", worker)
    # Celery's worker sends worker_init as it sets itself up, before its pool starts.
    worker += "; from celery.signals import worker_init; worker_init.send(sender=None)"
    assert "runtime.mcp.client" in imported("-c", worker)


def test_a_manage_py_command_starts_without_the_mcp_sdk(tmp_path):
    """`manage.py demo` refused on production settings: what any command imports (the system
    checks' URLs, the API, services.runs and the specialists' services) and no more."""
    names = imported(
        "manage.py",
        "demo",
        "--no-sample",
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("MINUTES_")},
            "MINUTES_DEBUG": "0",
            "MINUTES_SECRET_KEY": secrets.token_urlsafe(50),
            "MINUTES_HOME": str(tmp_path / "home"),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'never.sqlite3'}",
        },
    )
    # A module imported first by importlib.import_module (Django's import_string: a
    # middleware, axes' callables) gets no line of -X importtime, only the modules its own
    # import statements bring; whether the URLs' `import` or a middleware's import_string
    # comes first is the order Django's system checks run in, which is a set's. So the API is
    # known imported by any module of it.
    assert "services.specialists" in names
    assert any(name == "dashboard.api" or name.startswith("dashboard.api.") for name in names)
    assert [name for name in names if name == "mcp" or name.startswith("mcp.")] == []
