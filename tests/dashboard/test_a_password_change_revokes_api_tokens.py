"""A person's API tokens stop working the moment their password changes, however it changed
(`manage.py changepassword`, set_password and save, an UPDATE of the row), each refusal a 401
saying the token was revoked because its account's password changed, naming no account and
writing nothing; a token made after the change works, and so do other people's. A person
deactivated opens nothing with their tokens, nor one deleted (their tokens go with them). A
new hash of the same password at sign-in (Django's rehash after its hasher changed) is no
change: the tokens go on. Tokens made before the marks were kept are marked by migration 0003
with the hash as it is, and go on."""

from __future__ import annotations

import importlib
from io import StringIO
from types import SimpleNamespace

import pytest
from axes.models import AccessAttempt
from django.apps import apps
from django.contrib.auth.hashers import PBKDF2SHA1PasswordHasher as OLD
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connections
from django.test import Client

from dashboard.api.auth import DEACTIVATED, REVOKED
from dashboard.models import ApiToken
from journal_store.models import StoredEvent
from tests.conftest import on_every_backend
from tests.dashboard.conftest import make_user

pytestmark = pytest.mark.django_db

NEW = "walnut-harbour-ledger-38"
MARKED = importlib.import_module("dashboard.migrations.0003_api_token_password_mark")
DEFAULT = SimpleNamespace(connection=connections["default"])  # the schema editor, as 0003 reads it


def api(token: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}", raise_request_exception=False)


def by_changepassword(user: User, monkeypatch) -> None:
    monkeypatch.setattr("getpass.getpass", lambda prompt="": NEW)  # typed twice at its prompt
    call_command("changepassword", user.username, stdout=StringIO())


def by_set_password(user: User, monkeypatch) -> None:
    user.set_password(NEW)
    user.save()


def by_update(user: User, monkeypatch) -> None:
    # No save, no signal: the path a receiver of the user's save would never see.
    User.objects.filter(pk=user.pk).update(password=make_password(NEW))


@pytest.mark.parametrize("change", [by_changepassword, by_set_password, by_update])
def test_a_password_change_revokes_every_token_of_its_person(reviewer, monkeypatch, change):
    held = [ApiToken.issue(reviewer, name)[1] for name in ("ci", "nightly")]
    reader = ApiToken.issue(reviewer, "watch", read_only=True)[1]
    others = ApiToken.issue(make_user("bob"), "bob's")[1]
    for token in [*held, reader]:
        assert api(token).get("/api/runs").status_code == 200
    before = list(ApiToken.objects.order_by("pk").values())
    fresh = User.objects.get(pk=reviewer.pk)  # the change is made on an object of its own

    change(fresh, monkeypatch)

    for token in [*held, reader]:
        for answer in (
            api(token).get("/api/runs"),
            api(token).post("/api/runs", {"team": "repo-fix"}, "application/json"),
            api(token).get("/api/openapi.json"),
        ):
            assert answer.status_code == 401, answer.content
            detail = answer.json()["detail"]
            assert detail.startswith(REVOKED) and "password was changed" in detail
            assert "reviewer" not in detail and "bob" not in detail and token not in detail
    # Nothing written but the failures counted against the address: the tokens are kept (the
    # list says why they are refused), unused since, and no run was started.
    assert list(ApiToken.objects.order_by("pk").values()) == before
    assert StoredEvent.objects.count() == 0
    assert AccessAttempt.objects.get().failures_since_start == 9

    assert api(others).get("/api/runs").status_code == 200  # another's password, unchanged
    made_after = ApiToken.issue(reviewer, "after")[1]  # from the object read before the change
    assert api(made_after).get("/api/runs").status_code == 200
    listed = StringIO()
    call_command("api_token", "reviewer", "--list", stdout=listed)
    lines = listed.getvalue().splitlines()
    assert sum("revoked: password changed" in line for line in lines) == 3
    assert "revoked" not in next(line for line in lines if "\tafter\t" in line)


def test_a_deactivated_persons_tokens_open_nothing(reviewer):
    token = ApiToken.issue(reviewer, "ci")[1]
    assert api(token).get("/api/runs").status_code == 200
    User.objects.filter(pk=reviewer.pk).update(is_active=False)
    answer = api(token).get("/api/runs")
    assert answer.status_code == 401
    assert answer.json()["detail"].startswith(DEACTIVATED)
    assert reviewer.username not in answer.text  # names no account
    assert api(token).get("/api/openapi.json").status_code == 401


def test_a_deleted_persons_tokens_go_with_them(reviewer):
    token = ApiToken.issue(reviewer, "ci")[1]
    reviewer.delete()
    assert not ApiToken.objects.exists()
    assert api(token).get("/api/runs").status_code == 401


def test_a_new_hash_of_the_same_password_at_sign_in_keeps_the_tokens(db, settings):
    rosa = make_user("rosa")
    # The hash of a hasher no longer preferred (the suite's is MD5: tests/conftest.py), as an
    # older Django's iteration count is: signing in hashes the password again.
    settings.PASSWORD_HASHERS = [*settings.PASSWORD_HASHERS, f"{OLD.__module__}.{OLD.__name__}"]
    User.objects.filter(pk=rosa.pk).update(password=OLD().encode("pw", "salt", iterations=10))
    token = ApiToken.issue(rosa, "ci")[1]
    before = User.objects.get(pk=rosa.pk).password

    signed = Client().post("/login", {"username": "rosa", "password": "pw"})
    assert signed.status_code == 302
    assert User.objects.get(pk=rosa.pk).password != before  # rehashed, the same password
    assert api(token).get("/api/runs").status_code == 200

    # A wrong password rehashes nothing, and a change after still revokes.
    assert Client().post("/login", {"username": "rosa", "password": "nope"}).status_code == 200
    assert api(token).get("/api/runs").status_code == 200
    rosa.refresh_from_db()
    rosa.set_password(NEW)
    rosa.save(update_fields=["password"])
    assert api(token).get("/api/runs").status_code == 401


def test_tokens_made_before_the_marks_are_marked_and_go_on(reviewer, owner):
    tokens = [ApiToken.issue(reviewer, "ci")[1], ApiToken.issue(owner, "ci")[1]]
    ApiToken.objects.update(password_mark="")  # as 0003 finds them
    assert all(api(t).get("/api/runs").status_code == 401 for t in tokens)
    MARKED.marked(apps, DEFAULT)
    assert all(api(t).get("/api/runs").status_code == 200 for t in tokens)
    marks = dict(ApiToken.objects.values_list("user__username", "password_mark"))
    MARKED.marked(apps, DEFAULT)  # run again, nothing to mark
    assert dict(ApiToken.objects.values_list("user__username", "password_mark")) == marks


@on_every_backend()
def test_the_marks_are_made_in_the_database_migrated(alias):
    """`migrate --database=ALIAS` marks that database's tokens: it read the default's, which
    may not hold the table yet (a second store migrated first)."""
    person = User.objects.db_manager(alias).create_user("ana", password="a-password")
    ApiToken.objects.using(alias).create(user=person, name="ci", digest="d" * 64)
    MARKED.marked(apps, SimpleNamespace(connection=connections[alias]))
    (mark,) = ApiToken.objects.using(alias).values_list("password_mark", flat=True)
    assert mark == ApiToken.mark(person.password)
