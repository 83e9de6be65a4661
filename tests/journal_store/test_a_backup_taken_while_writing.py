"""`manage.py backup FILE` on SQLite, taken while a writer appends: the copy is the store at
one moment (every stream's versions 1..n with no gap, no transaction in half), holds at least
what was committed before it began, is one self-contained file (journal mode DELETE, no -wal)
that passes SQLite's integrity check, and, put in place of the store, serves the same journal."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from tests.runtime.journal_contract import debit

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
BATCH = 3  # events a transaction appends: a copy holding part of one would show in its count


class Writer(threading.Thread):
    """Appends batches of BATCH events to a run's streams, one transaction each, until told
    to stop; `committed` counts the events whose transaction has returned."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.committed = 0
        self.some = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        journal = DjangoJournal("default")
        versions = {f"run-w{n}": 0 for n in range(3)}
        try:
            while not self.stop.is_set():
                for stream, version in versions.items():
                    journal.append(stream, [debit() for _ in range(BATCH)], version)
                    versions[stream] = version + BATCH
                    self.committed += BATCH
                if self.committed >= 30:
                    self.some.set()
        except BaseException as exc:
            self.error = exc
            self.some.set()
        finally:
            connection.close()


@pytest.fixture
def sqlite_only():
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite store")


def streams_of(copy: Path) -> dict[str, list[int]]:
    db = sqlite3.connect(copy)
    try:
        rows = db.execute("SELECT stream, version FROM journal_event ORDER BY stream, version")
        found: dict[str, list[int]] = {}
        for stream, version in rows:
            found.setdefault(stream, []).append(version)
        return found
    finally:
        db.close()


def test_a_backup_taken_while_a_writer_appends_is_one_consistent_moment(
    sqlite_only, tmp_path, capsys
):
    writer = Writer()
    writer.start()
    try:
        assert writer.some.wait(30) and writer.error is None
        before = writer.committed
        out = tmp_path / "minutes-backup.sqlite3"
        call_command("backup", str(out))
        after_backup = writer.committed
    finally:
        writer.stop.set()
        writer.join(30)
    assert writer.error is None
    said = capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["minutes-backup.sqlite3"]  # no -wal

    db = sqlite3.connect(out)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        events, runs = db.execute(
            "SELECT count(*), count(DISTINCT run_id) FROM journal_event"
        ).fetchone()
    finally:
        db.close()
    streams = streams_of(out)
    assert set(streams) == {"run-w0", "run-w1", "run-w2"}
    for versions in streams.values():
        assert versions == list(range(1, len(versions) + 1))  # no gap
        assert len(versions) % BATCH == 0  # no transaction in half
    assert before <= events <= after_backup
    assert StoredEvent.objects.count() == writer.committed  # the writer went on, undisturbed
    assert f"{out}: " in said
    runs_said = f"{runs} run" if runs == 1 else f"{runs:,} runs"
    assert f"{events:,} events of {runs_said} (counted in the copy)" in said


@pytest.mark.slow
def test_the_copy_put_in_place_exports_a_finished_run_as_the_store_did(
    sqlite_only, tmp_path, capsys
):
    """Restoring is pointing DATABASE_URL at the copy (docs/journal.md, Backups)."""
    journal = DjangoJournal("default")
    journal.append("run-done", [debit(n) for n in range(1, 6)], 0)
    call_command("export_journal", "r-1", "-o", str(tmp_path / "from-the-store.jsonl"))
    out = tmp_path / "copy.sqlite3"
    call_command("backup", str(out))
    journal.append("run-later", [debit()], 0)  # after the backup: not the copy's business

    exported = subprocess.run(
        [sys.executable, "manage.py", "export_journal", "r-1"],
        cwd=ROOT,
        env={**os.environ, "MINUTES_DEBUG": "1", "DATABASE_URL": f"sqlite:///{out}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert exported.stdout == (tmp_path / "from-the-store.jsonl").read_text()
    assert len(exported.stdout.splitlines()) == 5


def corrupt_database(path: Path, pages_torn: bool) -> None:
    """A small journal whose index does not match its rows (integrity_check says so, reads
    work), or with a page overwritten (SQLite cannot read it)."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE journal_event (run_id text, stream text)")
    db.execute("CREATE INDEX by_stream ON journal_event (stream)")
    db.executemany(
        "INSERT INTO journal_event VALUES ('r-1', ?)", [(f"s{n}" * 30,) for n in range(500)]
    )
    db.commit()
    if not pages_torn:
        db.execute("PRAGMA writable_schema=ON")
        db.execute(
            "UPDATE sqlite_master SET sql = 'CREATE INDEX by_stream ON journal_event (run_id)' "
            "WHERE name = 'by_stream'"
        )
        db.commit()
    db.close()
    if pages_torn:
        with path.open("r+b") as file:
            file.seek(100)  # the schema's page
            file.write(b"\xff" * 200)


@pytest.mark.slow
@pytest.mark.django_db(transaction=False)
@pytest.mark.parametrize(
    "pages_torn, why",
    [
        (False, "failed SQLite's integrity check: row 1 missing from index by_stream"),
        (True, "failed: database disk image is malformed"),
    ],
)
def test_a_copy_that_fails_its_check_is_not_written(tmp_path, pages_torn, why):
    live = tmp_path / "live.sqlite3"
    corrupt_database(live, pages_torn)
    out = tmp_path / "copy.sqlite3"
    done = subprocess.run(
        [sys.executable, "manage.py", "backup", str(out)],
        cwd=ROOT,
        env={**os.environ, "MINUTES_DEBUG": "1", "DATABASE_URL": f"sqlite:///{live}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"CommandError: the copy of {live} {why}")
    assert done.stderr.rstrip().endswith(f"; nothing was written to {out}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live.sqlite3"]
