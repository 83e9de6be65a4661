"""The beat's rounds when the database does not answer: one line each, not a traceback.

Run in a process of its own pointed at a PostgreSQL address nothing listens on, so the
connection is really refused (no database is stubbed), and the rounds are called as the beat's
worker calls them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ROUNDS = """
import logging, sys
logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
import django
django.setup()
from tasks.effects import reconcile_effects
from tasks.runs import reconcile
print(reconcile(), reconcile_effects())
"""


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_round_of_the_beat_with_the_database_down_says_so_in_a_line_and_does_nothing(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://minutes@127.0.0.1:{unused_port()}/minutes",
        "MINUTES_HOME": str(tmp_path),
        "MINUTES_DEBUG": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", ROUNDS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] []"
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr
    assert len(lines) == 2, done.stderr
    assert lines[0].startswith(
        "reviving stalled runs skipped this round: the database does not answer ("
    )
    assert lines[1].startswith("settling effects in flight skipped this round")
    assert "Connection refused" in lines[0]  # the database's own words, its first line
