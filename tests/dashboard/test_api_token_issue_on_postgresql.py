"""ApiToken.issue on PostgreSQL reads its person's password hash under a lock of their row,
held until the token is stored: a password change racing it, from a thread on a connection of
its own, waits for the token and then revokes it, as it does any token made before it. Without
the lock the change committed between the read and the insert, and the token, made after it,
carried the old hash's mark: refused from the start.

The token's maker waits, once it has read the hash, for the change to commit (WAIT at most).
With the lock the change cannot (its UPDATE waits on the row), so the maker goes on when WAIT
runs out; without it, the change commits first, every time."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.db import connections

from dashboard.models import ApiToken
from tests.conftest import ALIASES
from tests.dashboard.conftest import make_user, on_postgresql
from tests.dashboard.test_a_password_change_revokes_api_tokens import NEW, api

pytestmark = pytest.mark.django_db(databases=ALIASES, transaction=True)
WAIT = 2.0  # how long the maker, the hash read, waits for the change to commit


def on_its_own(work: Callable[[], None]) -> threading.Thread:
    """`work` in a thread of its own, on a connection of its own to PostgreSQL."""

    def go() -> None:
        on_postgresql()
        try:
            work()
        finally:
            connections.close_all()

    thread = threading.Thread(target=go)
    thread.start()
    return thread


@pytest.mark.usefixtures("postgresql")
def test_a_password_change_racing_a_token_waits_for_it_and_revokes_it(monkeypatch):
    person = make_user("ann")
    read, committed = threading.Event(), threading.Event()
    order: list[str] = []
    issuing = threading.local()
    real = ApiToken.mark

    def mark(password_hash: str) -> str:
        if getattr(issuing, "now", False):  # the maker, its person's hash just read
            read.set()
            committed.wait(WAIT)
            order.append("marked")
        return real(password_hash)

    monkeypatch.setattr(ApiToken, "mark", staticmethod(mark))
    made: list[str] = []

    def issue() -> None:
        issuing.now = True
        made.append(ApiToken.issue(User.objects.get(pk=person.pk), "ci")[1])

    def change() -> None:
        assert read.wait(60)
        user = User.objects.get(pk=person.pk)
        user.set_password(NEW)
        user.save()  # committed when it returns: the suite's connections autocommit
        order.append("changed")
        committed.set()

    threads = [on_its_own(issue), on_its_own(change)]
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads)
    [token] = made
    live = api(token).get("/api/runs").status_code == 200
    # Made first, then revoked by the change after it: never a token made after a change and
    # refused for it.
    assert order == ["marked", "changed"], f"the change committed first; the token is {live=}"
    assert not live
    after = ApiToken.issue(User.objects.get(pk=person.pk), "after")[1]
    assert api(after).get("/api/runs").status_code == 200
