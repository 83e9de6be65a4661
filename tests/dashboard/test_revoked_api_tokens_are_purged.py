"""`manage.py api_token USER --list` shows a token a change of USER's password revoked as
revoked (not by its expiry, as a live one), and says beside the list how to delete them;
`--purge-revoked` deletes those and no other (not USER's live ones, not another person's
revoked ones), naming each. A revoked token is refused only while the hash is another: a row
restored from before the change would open it again, unless it was purged."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from dashboard.models import ApiToken
from tests.dashboard.conftest import make_user
from tests.dashboard.test_a_password_change_revokes_api_tokens import api, by_changepassword

pytestmark = pytest.mark.django_db


def command(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("api_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def made(user: str, name: str, *more: str) -> str:
    return command(user, "--name", name, *more)[0].strip()


def number(name: str) -> int:
    return ApiToken.objects.get(name=name).pk


def test_revoked_tokens_are_listed_so_and_purged_alone(reviewer, monkeypatch):
    ci, nightly = made("reviewer", "ci"), made("reviewer", "nightly", "--read-only")
    make_user("bob")
    bobs = made("bob", "bob-ci")
    assert api(ci).get("/api/runs").status_code == 200
    by_changepassword(User.objects.get(username="reviewer"), monkeypatch)
    by_changepassword(User.objects.get(username="bob"), monkeypatch)
    after = made("reviewer", "after")

    listed, beside = command("reviewer", "--list")

    lines = {line.split("\t")[1]: line for line in listed.splitlines()}
    assert set(lines) == {"ci", "nightly", "after"}
    for name in ("ci", "nightly"):
        assert "\trevoked: password changed since it was made\t" in lines[name]
        assert "expires" not in lines[name]  # not shown as live till its expiry
    assert "revoked" not in lines["after"] and "\texpires " in lines["after"]
    assert beside.strip() == "2 of them revoked; `api_token reviewer --purge-revoked` deletes them"
    ci_number, nightly_number = number("ci"), number("nightly")

    purged, _ = command("reviewer", "--purge-revoked")

    assert purged.splitlines() == [
        f"deleted revoked token {ci_number} (ci) of reviewer",
        f"deleted revoked token {nightly_number} (nightly) of reviewer",
    ]
    assert sorted(ApiToken.objects.values_list("name", flat=True)) == ["after", "bob-ci"]
    assert api(after).get("/api/runs").status_code == 200
    assert api(nightly).get("/api/runs").status_code == 401
    assert (
        api(ci).get("/api/runs").status_code == 401
        and api(bobs).get("/api/runs").status_code == 401
    )
    listed, beside = command("reviewer", "--list")
    assert [line.split("\t")[1] for line in listed.splitlines()] == ["after"] and beside == ""
    assert command("reviewer", "--purge-revoked")[0].strip() == "reviewer has no revoked token"
    assert command("bob", "--list")[1].startswith("1 of them revoked")  # bob's, kept


def test_a_purged_token_stays_refused_when_the_old_hash_comes_back(reviewer, monkeypatch):
    mine, bobs = made("reviewer", "ci"), (make_user("bob"), made("bob", "ci"))[1]
    old = dict(User.objects.values_list("username", "password"))
    for person in ("reviewer", "bob"):
        by_changepassword(User.objects.get(username=person), monkeypatch)
    command("reviewer", "--purge-revoked")

    for person in ("reviewer", "bob"):  # each row as a backup made before the change held it
        User.objects.filter(username=person).update(password=old[person])

    assert api(bobs).get("/api/runs").status_code == 200  # kept, revoked: open again
    assert api(mine).get("/api/runs").status_code == 401  # purged: gone for good
