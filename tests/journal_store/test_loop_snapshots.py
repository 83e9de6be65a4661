"""The workers' snapshot store (journal_store/snapshots.py), on every backend: a run resumed
from it writes the journal of an uninterrupted run; one row per stream, replaced; a snapshot
torn, edited or stored under another stream's name is never trusted; a save that fails is
left out without failing the step."""

from __future__ import annotations

import logging

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal
from journal_store.models import LoopSnapshot as Row
from journal_store.snapshots import DatabaseSnapshots
from runtime.session import Session
from runtime.snapshots import LoopSnapshot
from tests.journal_store.conftest import on_every_backend
from tests.runtime.helpers import facts
from tests.runtime.test_snapshot_resume import RUN, STREAM, fly, in_steps, uninterrupted


def snap(stream: str, version: int, history: str = "x") -> LoopSnapshot:
    return LoopSnapshot(stream, 1, "s", version, "v", "coder", "f", {"h": history}, {"n": 1})


@on_every_backend()
def test_a_run_resumed_from_database_snapshots_writes_the_uninterrupted_journal(alias):
    reference, expected = uninterrupted(30, "done")
    journal, snapshots = DjangoJournal(alias), DatabaseSnapshots(alias)
    sessions, result = in_steps(journal, snapshots, 30, "done")
    assert result == expected
    assert facts([r.event for r in journal.read(STREAM)]) == facts(
        [r.event for r in reference.read(STREAM)]
    )
    assert sum(1 for s in sessions if s.skipped) > len(sessions) // 2  # the path was taken
    assert Row.objects.using(alias).count() == 1  # one row, replaced save after save


@on_every_backend()
def test_one_row_per_stream_replaced_and_discarded_alone(alias):
    store = DatabaseSnapshots(alias)
    assert store.load("run-a") is None
    store.save(snap("run-a", 10, "x" * 5_000))
    store.save(snap("run-b", 7))
    store.save(snap("run-a", 20, "y"))  # shorter, later: it replaces the longer one whole
    assert store.load("run-a") == snap("run-a", 20, "y")
    assert Row.objects.using(alias).get(stream="run-a").version == 20
    store.discard("run-a")
    store.discard("run-a")  # and again: nothing to do
    assert store.load("run-a") is None
    assert store.load("run-b") == snap("run-b", 7)


@on_every_backend()
@pytest.mark.parametrize(
    "spoil",
    [
        lambda data: data[: len(data) // 2],  # torn
        lambda data: data.replace(b'"turn":12', b'"turn":20'),  # edited: the digest fails
        lambda data: b"not a snapshot",
    ],
    ids=["torn", "edited", "garbage"],
)
def test_a_corrupt_snapshot_row_is_ignored_and_the_run_replayed(alias, spoil):
    reference, expected = uninterrupted(30, "done")
    journal, snapshots = DjangoJournal(alias), DatabaseSnapshots(alias)
    fly(Session(journal, RUN, steps=14, snapshots=snapshots, snapshot_every=12), 30, "done")
    rows = Row.objects.using(alias)
    data = bytes(rows.get(stream=STREAM).data)
    assert snapshots.load(STREAM) is not None and spoil(data) != data
    rows.filter(stream=STREAM).update(data=spoil(data))
    assert snapshots.load(STREAM) is None
    resumed = Session(journal, RUN, steps=1, snapshots=snapshots)
    assert resumed.skipped == 0 and None not in resumed.recorded  # all of it was read
    _, result = in_steps(journal, snapshots, 30, "done")
    assert result == expected
    assert facts([r.event for r in journal.read(STREAM)]) == facts(
        [r.event for r in reference.read(STREAM)]
    )


@on_every_backend()
def test_a_snapshot_moved_under_another_streams_name_is_ignored(alias):
    store = DatabaseSnapshots(alias)
    store.save(snap("run-a", 10))
    Row.objects.using(alias).filter(stream="run-a").update(stream="run-b")
    assert store.load("run-b") is None


@on_every_backend()
def test_a_save_that_fails_is_logged_and_left_out(alias, caplog):
    store = DatabaseSnapshots(alias)
    with connections[alias].cursor() as cursor:
        cursor.execute("DROP TABLE loop_snapshot")  # undone with the test's transaction
    with caplog.at_level(logging.WARNING, logger="journal_store.snapshots"):
        store.save(snap("run-a", 10))  # does not raise
    assert "run-a" in caplog.text and "not kept" in caplog.text
    # the connection is still usable: the failed save was rolled back on its own
    assert DjangoJournal(alias).version("run-a") == 0


@on_every_backend(transaction=True)
def test_a_save_does_not_wait_for_the_disk_and_leaves_the_journals_durability_as_it_was(alias):
    """A snapshot is a cache: its commit skips the disk flush (the next journal commit makes
    it durable). The connection's durability is back to its own right after, for the journal's
    next append."""
    connection = connections[alias]
    sqlite = connection.vendor == "sqlite"
    ask = "PRAGMA synchronous" if sqlite else "SHOW synchronous_commit"
    lax = "PRAGMA synchronous=NORMAL" if sqlite else "SET LOCAL synchronous_commit TO OFF"

    def durability():
        with connection.cursor() as cursor:
            cursor.execute(ask)
            return cursor.fetchone()[0]

    with connection.cursor() as cursor:  # the suite's databases run with it lowered
        cursor.execute("PRAGMA synchronous=FULL" if sqlite else "SET synchronous_commit TO on")
    try:
        before = durability()
        assert before in (2, 3, "on")  # SQLite's FULL (as settings ask) or EXTRA; PostgreSQL's
        store = DatabaseSnapshots(alias)
        for version in (10, 20):
            with CaptureQueriesContext(connection) as captured:
                store.save(snap("run-a", version))
            statements = [q["sql"] for q in captured.captured_queries]
            assert lax in statements, statements
            assert durability() == before
        assert store.load("run-a") == snap("run-a", 20)
        assert not connection.in_atomic_block
    finally:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA synchronous=NORMAL" if sqlite else "RESET synchronous_commit")
