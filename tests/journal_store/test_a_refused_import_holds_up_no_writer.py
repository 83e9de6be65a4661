"""A journal refused for what it holds is refused before the import takes the lock every
append waits on: another writer holding that lock (a run's append in flight) does not hold up
the refusal, and the refusal holds up no run. A chaos test found a 44 MB file refused at line
92,020 had held every run's writes for the minute it took to get there."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connections

from journal_store.journal import APPEND_LOCK, DjangoJournal
from journal_store.transfer import CHUNK, ImportRefused, import_journal
from tests.journal_store.conftest import on_every_backend

pytestmark = on_every_backend(transaction=True)


@contextlib.contextmanager
def another_writer_holds_the_journal(alias: str) -> Iterator[None]:
    """Another connection holds the journal's write lock (SQLite's, or the advisory lock every
    PostgreSQL append takes); this one gives up waiting for it after a fifth of a second."""
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    if connection.vendor == "sqlite":
        other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        setting, reset = "PRAGMA busy_timeout = 200", "PRAGMA busy_timeout = 30000"
    else:
        other = psycopg.connect(**connection.get_connection_params(), autocommit=True)
        other.execute("SELECT pg_advisory_lock(%s)", [APPEND_LOCK])
        setting, reset = "SET lock_timeout = '200ms'", "RESET lock_timeout"
    with connection.cursor() as cursor:
        cursor.execute(setting)
    try:
        yield
    finally:
        other.close()
        with connection.cursor() as cursor:
            cursor.execute(reset)


def lines(count: int, bad_at: int) -> bytes:
    """A run of `count` events with a line that is no event at `bad_at`: past the first
    chunk, so the reading that writes would have appended (and locked) before reaching it."""
    rows = []
    for n in range(1, count + 1):
        row = {"kind": "BudgetDebited", "run_id": "r-held", "agent": "coder", "amount": 1}
        rows.append("{not json" if n == bad_at else json.dumps({**row, "version": n}))
    return "".join(row + "\n" for row in rows).encode()


def test_a_file_refused_at_a_late_line_is_refused_while_another_writer_holds_the_lock(alias):
    data = lines(CHUNK * 2 + 10, bad_at=CHUNK * 2 + 5)
    top = DjangoJournal(alias).last_position()
    with another_writer_holds_the_journal(alias), pytest.raises(ImportRefused) as refused:
        import_journal(io.BytesIO(data), name="late.jsonl", using=alias)
    assert refused.value.problems[0].startswith(f"line {CHUNK * 2 + 5}: ")
    assert DjangoJournal(alias).last_position() == top  # nothing written


def test_a_good_file_still_imports_once_the_writer_is_done(alias):
    data = lines(CHUNK + 10, bad_at=0)
    report = import_journal(io.BytesIO(data), name="good.jsonl", using=alias)
    assert report.added == CHUNK + 10 and report.run_ids == ["r-held"]


def test_a_postgres_session_idle_in_a_transaction_is_ended():
    """A process stopped inside a transaction holds the lock every append waits on; the
    server ends its session after 30 s idle there (config/env.py), and the lock goes with it."""
    if "postgres" not in connections:
        pytest.skip(
            "PostgreSQL is not available here (install it, or set MINUTES_TEST_POSTGRES_URL)"
        )
    with connections["postgres"].cursor() as cursor:
        cursor.execute("SHOW idle_in_transaction_session_timeout")
        assert cursor.fetchone()[0] == "30s"
