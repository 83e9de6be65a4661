"""`manage.py backup FILE --database postgres`: pg_dump's custom format, which pg_restore puts
into a fresh database holding the same events and runs the command reported; the password goes
to pg_dump in its environment, never on its command line nor in a message; without pg_dump the
command says how to get it and writes nothing."""

from __future__ import annotations

import subprocess
import uuid

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connections

from journal_store import backup
from journal_store.journal import DjangoJournal
from tests.conftest import need_postgres
from tests.runtime.journal_contract import debit
from tests.services import find

pytestmark = pytest.mark.django_db(databases=["default", "postgres"], transaction=True)

SECRET = "s3cret-Pa55word"


@pytest.fixture
def postgres():
    need_postgres()
    journal = DjangoJournal("postgres")
    journal.append("run-a", [debit(), debit()], 0)
    journal.append("run-b", [debit()], 0)
    return connections["postgres"].settings_dict


@pytest.fixture
def fresh_database(postgres):
    """An empty database on the suite's cluster, dropped afterwards."""
    name = f"restored_{uuid.uuid4().hex[:12]}"
    server = {k: v for k, v in cluster_params(postgres).items() if k != "dbname"}
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield name
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def cluster_params(settings_dict) -> dict:
    return {
        "dbname": settings_dict["NAME"],
        "host": settings_dict["HOST"] or None,
        "port": settings_dict["PORT"] or None,
        "user": settings_dict["USER"] or None,
    }


@pytest.mark.slow
def test_a_dump_restores_into_a_fresh_database_with_the_same_events_and_runs(
    postgres, fresh_database, tmp_path, capsys
):
    out = tmp_path / "minutes.dump"
    call_command("backup", str(out), "--database", "postgres")
    said = capsys.readouterr().err
    assert "3 events of 1 run (counted in the snapshot pg_dump copied)" in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["minutes.dump"]
    assert out.read_bytes().startswith(b"PGDMP")  # the custom format

    params = cluster_params(postgres)
    restore = [find("pg_restore"), "--no-owner", "--dbname", fresh_database, str(out)]
    server = [
        f"--host={params['host']}",
        f"--port={params['port']}",
        f"--username={params['user']}",
    ]
    subprocess.run(restore[:1] + server + restore[1:], check=True, capture_output=True, timeout=60)
    with psycopg.connect(**{**params, "dbname": fresh_database}) as restored:
        counts = restored.execute(
            "SELECT count(*), count(DISTINCT run_id) FROM journal_event"
        ).fetchone()
        streams = restored.execute(
            "SELECT stream, max(version) FROM journal_event GROUP BY stream ORDER BY stream"
        ).fetchall()
    assert counts == (3, 1)
    assert streams == [("run-a", 2), ("run-b", 1)]


@pytest.mark.slow
def test_the_password_goes_to_pg_dump_in_its_environment_only(postgres, tmp_path, monkeypatch):
    """The suite's cluster trusts its local user, so a password it is given is not asked for:
    what is checked is where the command puts it."""
    monkeypatch.setitem(postgres, "PASSWORD", SECRET)
    calls = []
    real_run = subprocess.run

    def spy(argv, **kwargs):
        calls.append((argv, kwargs["env"]))
        return real_run(argv, **kwargs)

    monkeypatch.setattr(backup.subprocess, "run", spy)
    call_command("backup", str(tmp_path / "minutes.dump"), "--database", "postgres")
    [(argv, env)] = calls
    assert not any(SECRET in part for part in argv)
    assert env["PGPASSWORD"] == SECRET
    assert argv[:3] == [backup.pg_dump(), "--format=custom", "--no-password"]
    assert f"dbname={postgres['NAME']}" in argv[3] and "password" not in argv[3]


def test_the_argv_holds_the_connection_but_not_its_password():
    settings_dict = {
        "NAME": "minutes",
        "HOST": "db.example",
        "PORT": "5433",
        "USER": "minutes",
        "PASSWORD": SECRET,
        "OPTIONS": {"server_side_binding": True, "options": "-c x=1", "sslmode": "require"},
    }
    argv, env = backup.pg_dump_call(settings_dict, "/usr/bin/pg_dump", "00000003-1")
    assert argv == [
        "/usr/bin/pg_dump",
        "--format=custom",
        "--no-password",
        "--dbname=dbname=minutes host=db.example port=5433 user=minutes sslmode=require",
        "--snapshot=00000003-1",
    ]
    assert env["PGPASSWORD"] == SECRET


def failing_pg_dump(tmp_path, monkeypatch, said: str) -> None:
    """The backup's pg_dump is a script in tmp_path that says `said` (shell words) on stderr
    and fails."""
    fake = tmp_path / "pg_dump"
    fake.write_text(f"#!/bin/sh\necho {said} >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(backup, "pg_dump", lambda: str(fake))


@pytest.mark.slow
def test_pg_dump_failing_is_said_without_the_password(postgres, tmp_path, monkeypatch):
    """What pg_dump says goes to the person; a password in it (it quotes none that we know
    of) is masked."""
    monkeypatch.setitem(postgres, "PASSWORD", SECRET)
    failing_pg_dump(tmp_path, monkeypatch, '"pg_dump: error: refused for $PGPASSWORD"')
    out = tmp_path / "minutes.dump"
    with pytest.raises(CommandError) as info:
        call_command("backup", str(out), "--database", "postgres")
    assert str(info.value) == (
        f"pg_dump failed (exit status 1): pg_dump: error: refused for ***; "
        f"nothing was written to {out}"
    )
    assert info.value.returncode == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pg_dump"]


def test_without_pg_dump_the_command_says_how_to_get_it(postgres, tmp_path, monkeypatch):
    monkeypatch.setattr(backup.shutil, "which", lambda name: None)
    monkeypatch.setattr(backup.glob, "glob", lambda pattern: [])
    with pytest.raises(CommandError) as info:
        call_command("backup", str(tmp_path / "minutes.dump"), "--database", "postgres")
    major = connections["postgres"].pg_version // 10000
    assert info.value.returncode == 2
    assert str(info.value).startswith("pg_dump was not found (on PATH, nor in ")
    assert f"`apt-get install postgresql-client-{major}`" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_the_newest_installed_pg_dump_is_taken_when_none_is_on_path(monkeypatch):
    monkeypatch.setattr(backup.shutil, "which", lambda name: None)
    installed = [f"/usr/lib/postgresql/{v}/bin/pg_dump" for v in ("9", "16", "15")]
    monkeypatch.setattr(backup.glob, "glob", lambda pattern: installed)
    assert backup.pg_dump() == "/usr/lib/postgresql/16/bin/pg_dump"


FAILED_TO_CONNECT = (
    'pg_dump: error: connection to server at "127.0.0.1", port 5432 failed: FATAL:  '
    'password authentication failed for user "minutes"'
)


@pytest.mark.parametrize("password", ["a", "1", "e", "0", "32", "ail"])
def test_a_short_password_inside_the_words_of_the_message_stars_nothing(password):
    """Replaced wherever it occurred, "a" starred every a of the message, "1" the address."""
    assert backup.masked(FAILED_TO_CONNECT, password) == FAILED_TO_CONNECT


def test_the_password_is_starred_where_it_stands_whole():
    assert backup.masked(FAILED_TO_CONNECT, "minutes").endswith('for user "***"')
    assert backup.masked(FAILED_TO_CONNECT, "5432").count("***") == 1
    assert backup.masked(f"refused for {SECRET}.", SECRET) == "refused for ***."
    assert backup.masked(f"x{SECRET}x stays", SECRET) == f"x{SECRET}x stays"
    assert backup.masked("pass word: here", "pass word") == "***: here"


def test_a_password_a_connection_string_gives_is_starred_whatever_its_length():
    said = backup.masked(
        'pg_dump: error: bad "host=db password=a user=x", '
        r"password='it\'s' and postgres://minutes:a@db:5432/minutes",
        "a",
    )
    assert said == (
        'pg_dump: error: bad "host=db password=*** user=x", '
        "password=*** and postgres://minutes:***@db:5432/minutes"
    )


@pytest.mark.slow
def test_a_one_letter_password_leaves_pg_dumps_message_as_it_was(postgres, tmp_path, monkeypatch):
    """Every "a" of the message was starred: `p***ssword ***uthentic***tion f***iled`."""
    monkeypatch.setitem(postgres, "PASSWORD", "a")
    failing_pg_dump(tmp_path, monkeypatch, f"'{FAILED_TO_CONNECT}'")
    out = tmp_path / "minutes.dump"
    with pytest.raises(CommandError) as info:
        call_command("backup", str(out), "--database", "postgres")
    assert str(info.value) == (
        f"pg_dump failed (exit status 1): {FAILED_TO_CONNECT}; nothing was written to {out}"
    )
