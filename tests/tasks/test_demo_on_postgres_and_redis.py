"""`make run` pointed at PostgreSQL and a Redis server of one's own, as the README says to: the
first screen names both (without a password) and the model endpoint set for the form's runs,
the sample run is flown on them and read back through the API, and Ctrl-C stops what demo
started and leaves the person's Redis running."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
import uuid
from urllib.parse import urlsplit

import pytest

from tests.services import PG_ENV, REDIS_ENV, free_port, left_running
from tests.tasks.conftest import ROOT, wait_until
from tests.tasks.test_demo import Demo

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (os.environ.get(PG_ENV) and os.environ.get(REDIS_ENV)),
        reason="needs the suite's PostgreSQL and Redis servers",
    ),
]


@pytest.fixture
def database():
    """A database of its own on the suite's PostgreSQL server, which demo migrates from empty:
    made with the C locale, whose searches fold ASCII letters only (the first screen says so)."""
    import psycopg

    server = os.environ[PG_ENV]
    name = f"demo_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE \"{name}\" TEMPLATE template0 LOCALE 'C'")
    parts = urlsplit(server)
    yield parts._replace(path=f"/{name}").geturl(), name
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_answers(url: str) -> bool:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as conn:
        conn.sendall(b"PING\r\n")
        return conn.recv(16).startswith(b"+PONG")


def test_demo_on_postgres_and_a_redis_of_ones_own_names_both_and_leaves_redis_running(
    tmp_path, database
):
    url, name = database
    broker = os.environ[REDIS_ENV]
    home = tmp_path / "home"
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": broker,
        "MINUTES_HOME": str(home),
        "PYTHONUNBUFFERED": "1",
        # An endpoint for the form's runs (nothing listens: the sample run is scripted).
        "MINUTES_MODEL_BASE_URL": "http://127.0.0.1:9/v1",
        "MINUTES_MODEL": "qwen2.5-coder",
    }
    port = free_port()
    demo = Demo(env, port)
    try:
        run_id = demo.wait_for(r"sample run:\s+\S+/runs/(r-[0-9a-f]+)/").group(1)
        screen = demo.output
        host = urlsplit(url)
        assert f"database:    PostgreSQL, minutes@127.0.0.1:{host.port}/{name}" in screen
        assert "(searches fold ASCII case only here: manage.py check --database default)" in screen
        assert f"broker:      {broker} (yours: left running)" in screen
        assert "Ctrl-C stops everything it started (web server, workers)." in screen
        assert (
            "endpoint:    http://127.0.0.1:9/v1 (model qwen2.5-coder, for the endpoint backend)"
        ) in screen
        assert not (home / "broker").exists()  # no embedded Redis was started

        token = subprocess.run(
            [sys.executable, "manage.py", "api_token", "demo"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

        def status() -> str:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/runs/{run_id}",
                headers={"Authorization": f"Bearer {token}"},
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.load(answer)["status"]

        wait_until(lambda: status() != "running", 90, "the sample run to finish")
        assert status() == "done"
    finally:
        assert demo.stop() == 0, demo.output
    assert "stopped." in demo.output
    assert left_running(str(home)) == [], "processes the demo started are still running"
    assert redis_answers(broker), "Ctrl-C stopped the person's own Redis"
