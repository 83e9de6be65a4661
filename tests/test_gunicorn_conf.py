"""gunicorn.conf.py: gunicorn's worker timeout outlasts the wait on the database, so a page
waiting on a database gone silent is answered 503 rather than cut by gunicorn (its default,
30 s, came first). gunicorn is not installed with the suite; that gunicorn reads the file from
the folder it starts in, and that its command line wins, is gunicorn's own (checked by hand:
`gunicorn --print-config config.wsgi` in the clone says `timeout = 45`, and 7 with
`--timeout 7`)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from config import env

ROOT = Path(__file__).resolve().parent.parent


def timeout(monkeypatch, url: str | None) -> int:
    if url is None:
        monkeypatch.delenv("DATABASE_URL", raising=False)
    else:
        monkeypatch.setenv("DATABASE_URL", url)
    return runpy.run_path(str(ROOT / "gunicorn.conf.py"))["timeout"]


@pytest.mark.parametrize(
    "url, waits",
    [
        (None, env.BUSY_SECONDS),  # the embedded default: SQLite's busy timeout
        ("sqlite:////srv/minutes.sqlite3", env.BUSY_SECONDS),
        ("postgres://u:p@db/minutes", 60),  # the silence bound (and connect_timeout's 10 s)
        ("postgres://u:p@db/minutes?tcp_user_timeout=120000", 120),
        ("postgres://u:p@db/minutes?tcp_user_timeout=1500", 2),
    ],
)
def test_a_worker_outlasts_the_longest_wait_on_its_database(monkeypatch, url, waits):
    assert env.longest_wait(url or env.DATABASE_URL) == waits
    assert timeout(monkeypatch, url) > waits


@pytest.mark.parametrize(
    "url",
    [
        "postgres://u:p@db/minutes?tcp_user_timeout=0",  # the URL turned the bound off
        "postgres://u:p@db/minutes?tcp_user_timeout=soon",  # Django refuses it as it starts
        "mysql://u:p@db/minutes",  # refused too
    ],
)
def test_gunicorns_own_timeout_stays_where_nothing_bounds_the_wait(monkeypatch, url):
    assert env.longest_wait(url) is None
    assert timeout(monkeypatch, url) == 30


def test_the_image_and_the_compose_file_leave_the_timeout_to_the_file():
    # gunicorn reads ./gunicorn.conf.py from /app, the image's working folder; a --timeout on
    # the command line would win over it.
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "WORKDIR /app" in dockerfile
    assert any(
        line.startswith("COPY ") and "gunicorn.conf.py" in line.split()
        for line in dockerfile.splitlines()
    )
    assert "--timeout" not in dockerfile
    assert "--timeout" not in (ROOT / "docker-compose.yml").read_text()
