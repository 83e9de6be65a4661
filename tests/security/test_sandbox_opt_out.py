"""Running agent code without the sandbox is the operator's explicit choice: MINUTES_SANDBOX=off
is warned about at start, journalled in the runs started so and shown on their page; any other
value is refused. Even then, agent code gets the allow-listed environment, not the worker's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from journal_store.journal import DjangoJournal
from runtime.sandbox import Sandbox
from services import runs
from tests.dashboard.conftest import client_for, make_user
from tests.security.sandboxing import fresh_workspace, tool
from tests.tasks.conftest import use_broker

ROOT = Path(__file__).resolve().parents[2]


def settings_loaded(**env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MINUTES_")}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "MINUTES_DEBUG": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_opting_out_is_warned_about_at_start():
    started = settings_loaded(MINUTES_SANDBOX="off")
    assert started.returncode == 0, started.stderr
    assert "MINUTES_SANDBOX=off: agent-written code runs WITHOUT the sandbox" in started.stderr
    assert "WITHOUT the sandbox" not in settings_loaded().stderr


def test_a_sandbox_setting_that_is_neither_required_nor_off_stops_the_start():
    started = settings_loaded(MINUTES_SANDBOX="maybe")
    assert started.returncode != 0
    assert "MINUTES_SANDBOX must be one of required, off; got 'maybe'" in started.stderr


@pytest.mark.django_db
def test_a_run_started_without_the_sandbox_says_so_on_its_page(settings, tmp_path):
    use_broker("memory://", {})
    settings.WORKSPACES = tmp_path / "workspaces"
    try:
        sandboxed = runs.start_run("repo-fix", "first-flight", by="owner")
        settings.SANDBOX = "off"
        bare = runs.start_run("repo-fix", "first-flight", by="owner")
    finally:
        use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)
    [started] = [r.event for r in DjangoJournal().read(f"run-{bare}")]
    assert started.config["sandbox"] is False
    owner = client_for(make_user("owner"))
    assert "no sandbox" in owner.get(f"/runs/{bare}/").content.decode()
    assert "no sandbox" not in owner.get(f"/runs/{sandboxed}/").content.decode()


def test_opted_out_agent_code_still_gets_no_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-0123456789abcdef")
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_env.py").write_text(
        "import os\n\n\ndef test_env():\n    assert 'OPENAI_API_KEY' in os.environ\n"
    )
    opted_out = Sandbox(required=False, bwrap="/nonexistent/bin/bwrap")
    result = tool(root, "run_tests", sandbox=opted_out, target="tests/test_env.py")["result"]
    assert (result["passed"], result["failed"]) == (0, 1)
