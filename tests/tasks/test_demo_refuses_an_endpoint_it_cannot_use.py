"""`manage.py demo --model endpoint` where no endpoint is configured stops before it starts
anything, saying what to set, as the form and the API refuse such a run. It used to start the
web server, the workers and a sample run that failed its step three times and waited in the
dead-letter queue."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.services import free_port
from tests.tasks.conftest import ROOT


@pytest.mark.parametrize(
    "models, said",
    [
        ({}, "--model endpoint: no OpenAI-compatible endpoint is configured"),
        (
            {"MINUTES_MODEL_BASE_URL": "http://127.0.0.1:9/v1"},
            "--model endpoint: MINUTES_MODEL is not set (nor OPENAI_MODEL)",
        ),
    ],
)
def test_demo_on_an_endpoint_it_cannot_use_starts_nothing(tmp_path, models, said):
    home = tmp_path / "home"
    database = tmp_path / "demo.sqlite3"
    ours = ("MINUTES_", "OPENAI_", "CELERY_", "DATABASE_URL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    env.update(
        MINUTES_DEBUG="1",
        MINUTES_HOME=str(home),
        DATABASE_URL=f"sqlite:///{database}",
        **models,
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "demo", "--port", str(free_port()), "--model", "endpoint"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr
    # Refused before the database was made or anything started: no logs, no broker, no run.
    assert not database.exists() and not (home / "logs").exists()
