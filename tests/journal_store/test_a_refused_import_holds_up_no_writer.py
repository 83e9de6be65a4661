"""A journal refused for what it holds is refused before the import takes the lock every
append waits on: another writer holding that lock (a run's append in flight) does not hold up
the refusal, and the refusal holds up no run. A chaos test found a 44 MB file refused at line
92,020 had held every run's writes for the minute it took to get there. A file that repeats an
event id, or holds one stored elsewhere, is refused before the lock too, where the store alone
found it, as the reading that writes appended (and, another writer holding the lock, the import
failed with 'database is locked')."""

from __future__ import annotations

import contextlib
import html
import io
import json
import sqlite3
from collections.abc import Iterator

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import Client

from journal_store.journal import APPEND_LOCK, DjangoJournal
from journal_store.transfer import CHUNK, ImportRefused, import_journal
from runtime.events import BudgetDebited
from tests.conftest import need_postgres
from tests.journal_store.conftest import on_every_backend
from tests.security.import_helpers import CHANNELS, an_importer

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


def ids(count: int, again: dict[int, int]) -> bytes:
    """A run of `count` events with ids of their own, but line n repeating line again[n]'s."""
    rows = [
        {"kind": "BudgetDebited", "id": f"{again.get(n, n):032x}", "run_id": "r-held", "amount": 1}
        for n in range(1, count + 1)
    ]
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


@pytest.mark.parametrize(
    ("again", "said"),
    [
        # past the first chunks: the reading that writes would have appended line 1 (and
        # locked) before it got there, and been told by the store
        (
            {CHUNK * 2 + 5: 1},
            f"line {CHUNK * 2 + 5}: field 'id': repeats the event id of line 1 "
            "(stream 'run-r-held', version 1)",
        ),
        # in one append: the store is not asked which
        (
            {CHUNK * 2 + 5: CHUNK * 2 + 3},
            f"line {CHUNK * 2 + 5}: field 'id': repeats the event id of line {CHUNK * 2 + 3}",
        ),
    ],
)
def test_a_file_repeating_an_id_is_refused_while_another_writer_holds_the_lock(alias, again, said):
    top = DjangoJournal(alias).last_position()
    with another_writer_holds_the_journal(alias), pytest.raises(ImportRefused) as refused:
        import_journal(io.BytesIO(ids(CHUNK * 2 + 10, again)), name="twice.jsonl", using=alias)
    assert refused.value.problems == [said]
    assert DjangoJournal(alias).last_position() == top  # nothing written


def test_a_file_with_an_id_stored_elsewhere_is_refused_while_another_writer_holds_the_lock(
    alias,
):
    elsewhere = BudgetDebited(id=f"{CHUNK * 2 + 5:032x}", run_id="r-other", amount=1)
    DjangoJournal(alias).append("run-r-other", [elsewhere], 0)
    top = DjangoJournal(alias).last_position()
    with another_writer_holds_the_journal(alias), pytest.raises(ImportRefused) as refused:
        import_journal(io.BytesIO(ids(CHUNK * 2 + 10, {})), name="taken.jsonl", using=alias)
    assert refused.value.problems == [
        f"line {CHUNK * 2 + 5}: field 'id': event id {elsewhere.id} is already stored "
        "(stream 'run-r-other', version 1)"
    ]
    assert DjangoJournal(alias).last_position() == top


@pytest.mark.parametrize("channel", CHANNELS)
def test_every_way_in_refuses_a_repeated_id_while_another_writer_holds_the_lock(channel, tmp_path):
    data = ids(CHUNK * 2 + 10, {CHUNK * 2 + 5: 1})
    client = Client()
    client.force_login(an_importer())  # (signing in writes a session)
    top = DjangoJournal().last_position()
    with another_writer_holds_the_journal("default"):
        if channel == "command":
            (tmp_path / "twice.jsonl").write_bytes(data)
            with pytest.raises(CommandError) as failed:
                call_command("import_journal", str(tmp_path / "twice.jsonl"))
            said = str(failed.value)
        else:
            upload = io.BytesIO(data)
            upload.name = "twice.jsonl"
            answer = client.post(
                "/api/journals" if channel == "api" else "/import", {"journal": upload}
            )
            assert answer.status_code == 400
            said = html.unescape(answer.content.decode())
    assert f"line {CHUNK * 2 + 5}: field 'id': repeats the event id of line 1 " in said
    assert DjangoJournal().last_position() == top


def test_a_good_file_still_imports_once_the_writer_is_done(alias):
    data = lines(CHUNK + 10, bad_at=0)
    report = import_journal(io.BytesIO(data), name="good.jsonl", using=alias)
    assert report.added == CHUNK + 10 and report.run_ids == ["r-held"]


def test_a_postgres_session_idle_in_a_transaction_is_ended():
    """A process stopped inside a transaction holds the lock every append waits on; the
    server ends its session after 30 s idle there (config/env.py), and the lock goes with it."""
    need_postgres()
    with connections["postgres"].cursor() as cursor:
        cursor.execute("SHOW idle_in_transaction_session_timeout")
        assert cursor.fetchone()[0] == "30s"
        # And no parallel plans (config/env.py: SESSION_OPTIONS), set by the same option.
        cursor.execute("SHOW max_parallel_workers_per_gather")
        assert cursor.fetchone()[0] == "0"
