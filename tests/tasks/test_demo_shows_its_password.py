"""The demo login's password is shown by the demo that makes it. It was made before the broker,
workers and web server started: a demo stopped (or failed) before its first screen had made a
login whose password nobody saw, and the next one said it "was shown the first time"."""

from __future__ import annotations

import re

import pytest

from tests.services import free_port, left_running
from tests.tasks.test_demo import Demo, demo_env

pytestmark = pytest.mark.slow


def test_a_demo_stopped_before_its_first_screen_leaves_the_password_to_the_next(tmp_path):
    home = tmp_path / "home"
    env = demo_env(home, f"sqlite:///{tmp_path / 'demo.sqlite3'}")
    port = free_port()
    first = Demo(env, port, "--no-sample")
    try:
        # Migrated, and starting what it runs: Ctrl-C here, before the first screen.
        first.wait_for(r"starting the workers and the web server")
    finally:
        assert first.stop() == 0, first.output
    assert "Minutes is running" not in first.output and "password" not in first.output
    assert left_running(str(home)) == []

    # On a port of its own: what this asks of the second demo is its password, and a first demo
    # stopped just as it started its web server can leave the port taken for a moment.
    again = Demo(env, free_port(), "--no-sample")
    try:
        again.wait_for(r"Ctrl-C stops everything")
        assert re.search(r"log in:\s+user 'demo', password '\S{16}' \(shown once\)", again.output)
        assert "was shown the first time" not in again.output
    finally:
        assert again.stop() == 0, again.output
    assert left_running(str(home)) == []
