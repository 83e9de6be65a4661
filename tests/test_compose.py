"""docker-compose.yml is a valid Compose file (checked by docker-compose itself)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(
    shutil.which("docker-compose") is None,
    reason="docker-compose is not available here (apt-get install docker-compose)",
)
def test_the_compose_file_validates_and_names_every_service():
    env = {**os.environ, "MINUTES_SECRET_KEY": "x" * 50}
    check = subprocess.run(
        ["docker-compose", "-f", "docker-compose.yml", "config", "--services"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stderr
    assert set(check.stdout.split()) == {"postgres", "redis", "web", "worker", "beat"}


@pytest.mark.skipif(
    shutil.which("docker-compose") is None,
    reason="docker-compose is not available here (apt-get install docker-compose)",
)
def test_the_compose_file_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "MINUTES_SECRET_KEY"}
    check = subprocess.run(
        ["docker-compose", "-f", "docker-compose.yml", "config", "-q"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode != 0 and "set MINUTES_SECRET_KEY" in check.stderr
