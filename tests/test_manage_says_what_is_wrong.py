"""A newcomer's mistakes in the environment make manage.py say what is wrong and what to do,
in a line or two: a setting config/settings.py refuses, a PostgreSQL URL without its driver
installed, a database that is not running, a database with no tables yet. Each used to end a
traceback of thirty lines of Django, the one line that mattered at its bottom."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env

ROOT = Path(__file__).resolve().parents[1]


def manage(*args: str, **environ: str) -> subprocess.CompletedProcess[str]:
    """`manage.py ARGS` in a process of its own, with these environment variables."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, "MINUTES_DEBUG": "1", **environ},
        capture_output=True,
        text=True,
        timeout=120,
    )


def closed_port() -> int:
    """A port nothing listens on: taken from the kernel, then given back."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_setting_is_one_line_naming_it():
    done = manage("check", MINUTES_STEP_TURNS="x")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert (
        done.stderr == "Minutes cannot start: MINUTES_STEP_TURNS must be a whole number, got 'x'\n"
    )


def test_a_local_model_address_without_v1_is_refused_before_anything_waits_for_it():
    # Without /v1 the server answered 404 to everything, and demo --model local waited two
    # minutes for it before saying it did not answer.
    done = manage("check", MINUTES_LOCAL_MODEL_URL="http://127.0.0.1:8766")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("Minutes cannot start: MINUTES_LOCAL_MODEL_URL must be ")
    assert "the path /v1" in done.stderr and "not 'http://127.0.0.1:8766'" in done.stderr


def test_a_bad_database_url_is_one_line_naming_it():
    done = manage("migrate", DATABASE_URL="mysql://a@b/c")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "DATABASE_URL must start with sqlite:// or postgres://, got 'mysql'" in done.stderr


def test_a_database_that_does_not_answer_is_named_without_its_password():
    port = closed_port()
    done = manage(
        "migrate", DATABASE_URL=f"postgres://minutes:TopSecretPw@127.0.0.1:{port}/minutes"
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    said = done.stderr
    assert said.startswith(
        f"cannot reach the database, PostgreSQL database 'minutes' at 127.0.0.1:{port} as minutes"
    )
    assert "DATABASE_URL" in said and "TopSecretPw" not in said


def test_a_database_with_no_tables_says_to_migrate(tmp_path):
    file = tmp_path / "fresh.sqlite3"
    done = manage("export_journal", "r-000000000000", DATABASE_URL=f"sqlite:///{file}")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"the database, the SQLite file {file}, has no tables yet" in done.stderr
    assert "manage.py migrate` first" in done.stderr


@pytest.mark.parametrize("command", [["migrate"], ["api_token", "alice", "--list"]])
def test_a_file_that_holds_no_database_is_named_and_left_as_it_was(tmp_path, command):
    """A journal exported over it, or a file named by mistake: Django's traceback ended in
    "file is not a database", thirty lines down."""
    file = tmp_path / "minutes.sqlite3"
    file.write_text('{"kind": "RunStarted", "agent": "coder", "task": "Fix."}\n' * 200)
    kept = file.read_bytes()
    done = manage(*command, DATABASE_URL=f"sqlite:///{file}")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr == (
        f"the database, the SQLite file {file}, is not an SQLite database (file is not a "
        "database): DATABASE_URL names a file that holds something else. Name the store's "
        "file, or put a backup in its place (docs/journal.md, Backups)\n"
    )
    assert file.read_bytes() == kept


def test_traceback_still_gives_the_traceback():
    """A developer who asks for it gets what Django would have shown."""
    done = manage("check", "--traceback", MINUTES_STEP_TURNS="x")
    assert done.returncode != 0 and "Traceback" in done.stderr


def test_a_postgres_url_without_its_driver_names_the_extra_to_install(monkeypatch):
    # None in sys.modules is how Python is told a module cannot be imported: as where psycopg
    # is not installed, which is what `make run` leaves.
    monkeypatch.setitem(sys.modules, "psycopg", None)
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    with pytest.raises(ImproperlyConfigured) as info:
        env.database("postgres://minutes:TopSecretPw@127.0.0.1:5432/minutes", Path("/tmp"))
    said = str(info.value)
    assert "its driver is not installed" in said and "pip install -e '.[postgres]'" in said
    assert "TopSecretPw" not in said
