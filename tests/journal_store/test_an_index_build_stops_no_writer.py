"""On PostgreSQL, a migration that builds one of the journal's indexes (journal_store/
index_build.py) does not stop its writers: with a transaction open on journal_event, the build
waits for it, and another append goes through meanwhile, where behind a plain CREATE INDEX it
queued (the plain build's SHARE lock waits for the open transaction, and every INSERT after
waits behind it). An INVALID index that an interrupted build left is built again; going
backwards drops it."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
import pytest
from django.db import NotSupportedError, connections, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

from journal_store import index_build
from tests.conftest import need_postgres, on_every_backend

pytestmark = on_every_backend(transaction=True)  # the postgres fixture below skips without it

NAME = "journal_stream_prefix"  # migration 0050's, an expression index
PLAIN = f'CREATE INDEX {NAME} ON journal_event ((stream COLLATE "C"))'


@pytest.fixture
def postgres():
    need_postgres()
    connection = connections["postgres"]
    connection.ensure_connection()
    yield connection
    forwards()  # the index as migrate left it, for the tests after


def session(postgres) -> psycopg.Connection:
    return psycopg.connect(**postgres.get_connection_params(), autocommit=True)


def insert(cursor, stream: str, version: int = 1) -> None:
    cursor.execute(
        "INSERT INTO journal_event (id, stream, version, run_id, kind, v, data, t, recorded_at) "
        "VALUES (%s, %s, %s, 'r-1', 'ToolDispatched', 1, '{}', 0, now())",
        [uuid.uuid4(), stream, version],
    )


def the_operation():
    """Migration 0050's operation, as `migrate` loads it."""
    migration = MigrationLoader(None).get_migration("journal_store", "0050_stream_prefix_index")
    [operation] = migration.operations
    return operation


def forwards() -> None:
    """Migration 0050's build, on a connection of its own (this thread's)."""
    connection = connections["postgres"]
    with connection.schema_editor(atomic=False) as editor:
        the_operation().database_forwards("journal_store", editor, None, None)


def backwards() -> None:
    connection = connections["postgres"]
    with connection.schema_editor(atomic=False) as editor:
        the_operation().database_backwards("journal_store", editor, None, None)


def index(postgres) -> tuple[bool, bool, str] | None:
    """(valid, unique, definition) of the index, or None if there is none."""
    with postgres.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid, i.indisunique, pg_get_indexdef(i.indexrelid) "
            "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
            [NAME],
        )
        return cursor.fetchone()


@contextmanager
def in_a_thread(build: Callable[[], None]) -> Iterator[list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            build()
        except BaseException as error:  # handed to the test, which raises it
            errors.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield errors
    finally:
        thread.join()


def wait_until_the_build_waits(watcher: psycopg.Connection) -> None:
    """Until the build is queued on a lock (a plain build on the table's, a concurrent one on
    the open transaction's end): what the writer then meets is what the build holds."""
    while True:
        row = watcher.execute(
            "SELECT wait_event_type FROM pg_stat_activity "
            "WHERE query LIKE 'CREATE INDEX%%' AND pid <> pg_backend_pid()"
        ).fetchone()
        if row is not None and row[0] == "Lock":
            return
        watcher.execute("SELECT pg_sleep(0.02)")


def an_append_while_a_build_waits(postgres, build: Callable[[], None]) -> None:
    """A holds an append open; the build starts and waits for it; C appends with a lock
    timeout of 2 s (raising LockNotAvailable if it queued that long). A commits after."""
    backwards()
    a, c = session(postgres), session(postgres)
    try:
        a.execute("BEGIN")
        insert(a.cursor(), "run-a")
        with in_a_thread(build) as errors:
            try:
                wait_until_the_build_waits(c)
                c.execute("SET lock_timeout = '2s'")
                insert(c.cursor(), "run-c")
            finally:
                a.execute("COMMIT")
        if errors:
            raise errors[0]
    finally:
        a.close()
        c.close()


def test_an_append_goes_through_while_the_journals_index_is_built(postgres):
    an_append_while_a_build_waits(postgres, forwards)
    with postgres.cursor() as cursor:
        cursor.execute("SELECT stream FROM journal_event ORDER BY position")
        assert [row[0] for row in cursor.fetchall()] == ["run-a", "run-c"]
    valid, unique, _ = index(postgres)
    assert valid and not unique


def test_behind_a_plain_build_the_same_append_would_have_queued(postgres):
    """The test above's check, shown to catch a build that stops writers."""

    def plain() -> None:
        with connections["postgres"].cursor() as cursor:
            cursor.execute(PLAIN)

    with pytest.raises(psycopg.errors.LockNotAvailable):
        an_append_while_a_build_waits(postgres, plain)
    assert index(postgres)[0]  # built once A committed


def test_an_invalid_index_left_by_an_interrupted_build_is_built_again(postgres):
    backwards()
    # A concurrent build that fails leaves its index INVALID: here a unique one, which two
    # versions of one stream break.
    with postgres.cursor() as cursor:
        insert(cursor, "run-twice", 1)
        insert(cursor, "run-twice", 2)
    with session(postgres) as other, pytest.raises(psycopg.errors.UniqueViolation):
        other.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {PLAIN.removeprefix('CREATE INDEX ')}")
    assert index(postgres)[:2] == (False, True)
    forwards()
    valid, unique, definition = index(postgres)
    assert valid and not unique
    assert definition.endswith('USING btree (stream COLLATE "C")')
    forwards()  # run again (a later index of the migration had failed): kept as it is
    assert index(postgres)[:2] == (True, False)


def test_migrating_back_past_the_build_drops_the_index_and_forwards_builds_it(postgres):
    executor = MigrationExecutor(postgres)
    executor.migrate([("journal_store", "0049_open_effects")])
    assert index(postgres) is None
    executor = MigrationExecutor(postgres)
    executor.migrate(executor.loader.graph.leaf_nodes("journal_store"))
    assert index(postgres)[:2] == (True, False)


def test_a_build_inside_a_transaction_is_refused(postgres):
    backwards()
    with (
        pytest.raises(NotSupportedError, match="atomic = False"),
        transaction.atomic("postgres"),
        postgres.schema_editor(atomic=False) as editor,
    ):
        index_build.build(editor, NAME, lambda concurrent: None)
