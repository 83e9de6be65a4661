"""A fork whose events the database does not take (another writer holds it past the timeout,
another writer took the fork's stream) is answered with what failed and that nothing was
written, by the page and the API alike (503, 409), where both answered a bare 500; and it
leaves no event of the new run and no workspace: the fork's repository is restored before the
write, and a failed write left a directory for a run that does not exist.

The failures are real: another connection holds the database's write lock while the fork is
asked for, and the fork's id is one whose stream another writer has already written."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from journal_store import projection
from journal_store.journal import APPEND_LOCK, DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from runtime import flight
from runtime.events import BudgetDebited
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db(transaction=True)


@contextlib.contextmanager
def another_writer_holds_the_journal() -> Iterator[None]:
    """Another connection holds the journal's write lock (SQLite's, or the advisory lock every
    PostgreSQL append takes), and this one waits a fifth of a second for it, not 30."""
    with connection.cursor() as cursor:  # this connection, open before the lock is taken
        cursor.execute("SELECT 1")
    if connection.vendor == "sqlite":
        other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA busy_timeout = 200")
        try:
            yield
        finally:
            other.rollback()
            other.close()
            with connection.cursor() as cursor:
                cursor.execute(f"PRAGMA busy_timeout = {30_000}")
    else:
        other = psycopg.connect(**connection.get_connection_params(), autocommit=True)
        other.execute("SELECT pg_advisory_lock(%s)", [APPEND_LOCK])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '200ms'")
        try:
            yield
        finally:
            other.close()
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")


def tool_result_of(parent: str) -> int:
    return next(
        r.position for r in DjangoJournal().read(f"run-{parent}") if r.event.kind == "ToolReturned"
    )


def state() -> tuple[int, int, set[str]]:
    """The events stored, the runs summarised, the folders in the workspaces' root."""
    root = settings.WORKSPACES
    names = {p.name for p in root.iterdir()} if root.is_dir() else set()
    return StoredEvent.objects.count(), RunSummary.objects.count(), names


def test_the_api_answers_503_when_the_database_does_not_take_the_fork(as_owner, owner):
    parent = run_of("first-flight")
    at = tool_result_of(parent)
    events, summaries, workspaces = state()
    with another_writer_holds_the_journal():
        response = as_owner.post(
            f"/api/runs/{parent}/fork", {"at": at}, content_type="application/json"
        )
    assert response.status_code == 503, response.content
    detail = response.json()["detail"]
    assert detail.startswith(f"the fork of run {parent} was not written: the database did not")
    assert "(database is locked)" in detail or "lock timeout" in detail
    assert "Nothing of the fork was written, and the workspace made for it was removed" in detail
    assert detail.endswith("try again in a moment")
    assert state() == (events, summaries, workspaces)  # no event, no run, no workspace
    # Nothing was left half-done either: the same request goes through once the writer is gone.
    again = as_owner.post(f"/api/runs/{parent}/fork", {"at": at}, content_type="application/json")
    assert again.status_code == 201, again.content


def test_the_page_says_the_fork_was_not_written_and_keeps_the_form(as_owner, owner):
    parent = run_of("first-flight")
    at = tool_result_of(parent)
    events, summaries, workspaces = state()
    with another_writer_holds_the_journal():
        page = as_owner.post(f"/runs/{parent}/fork", {"at": at, "message": ""})
    assert page.status_code == 503
    body = page.content.decode()
    assert f"the fork of run {parent} was not written" in body
    assert "try again in a moment" in body
    assert 'name="at"' in body  # the form, to send again as it was
    assert state() == (events, summaries, workspaces)


def test_a_fork_whose_stream_another_writer_took_is_a_409_and_writes_nothing(
    as_owner, owner, monkeypatch
):
    parent = run_of("first-flight")
    at = tool_result_of(parent)
    # The id the fork is given names a run another writer has begun: its journal is taken.
    DjangoJournal().append("run-r-taken", [BudgetDebited(run_id="r-taken", amount=1)], 0)
    projection.catch_up()  # its summary is its own, made before the fork is asked for
    monkeypatch.setattr(flight, "new_run_id", lambda: "r-taken")
    events, summaries, workspaces = state()
    response = as_owner.post(
        f"/api/runs/{parent}/fork", {"at": at}, content_type="application/json"
    )
    assert response.status_code == 409, response.content
    detail = response.json()["detail"]
    assert "another writer took one of its streams first" in detail
    assert "Nothing of the fork was written, and the workspace made for it was removed" in detail
    assert state() == (events, summaries, workspaces)
    assert [r.event.kind for r in DjangoJournal().read("run-r-taken")] == ["BudgetDebited"]
