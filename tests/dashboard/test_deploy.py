"""Production settings pass Django's own deployment checks, and refuse to start without a key."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MINUTES_")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        MINUTES_DEBUG="0",
        MINUTES_SECRET_KEY=secrets.token_urlsafe(50),
        MINUTES_ALLOWED_HOSTS="minutes.example.com",
        MINUTES_HOME=str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_without_a_secret_key_refuses_to_start(tmp_path):
    result = manage("check", MINUTES_DEBUG="0", MINUTES_HOME=str(tmp_path))
    assert result.returncode != 0 and "MINUTES_SECRET_KEY must be set" in result.stderr


def test_a_malformed_setting_names_itself(tmp_path):
    result = manage("check", MINUTES_DEBUG="maybe", MINUTES_HOME=str(tmp_path))
    assert result.returncode != 0 and "MINUTES_DEBUG must be one of" in result.stderr
    result = manage("check", DATABASE_URL="mysql://x", MINUTES_DEBUG="1", MINUTES_HOME=str(tmp_path))
    assert (
        result.returncode != 0
        and "DATABASE_URL must start with sqlite:// or postgres://" in result.stderr
    )
