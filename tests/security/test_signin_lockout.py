"""Brute force against the login form and the API's tokens: after ten failures the attacker is
locked out, the right password included, and nobody is signed in; the lock is kept in the
database, so every web process sees it."""

from __future__ import annotations

import textwrap
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db import connections
from django.test import Client
from django.utils import timezone

from dashboard.models import ApiToken
from journal_store.models import StoredEvent
from tests.security.signin_helpers import (
    FAILURE_LIMIT,
    PASSWORD,
    fresh_process,
    is_signed_in,
    person,
    sign_in,
)

pytestmark = pytest.mark.django_db


def test_ten_wrong_passwords_lock_the_name_out_even_for_the_right_password(db):
    rosa = person("rosa", decide=True)
    attacker = Client()
    answers = [sign_in(attacker, "rosa", f"guess-{i}").status_code for i in range(FAILURE_LIMIT)]
    assert answers[: FAILURE_LIMIT - 1] == [200] * (FAILURE_LIMIT - 1)  # the form again
    assert answers[-1] == 429

    right = sign_in(attacker, "rosa", PASSWORD)
    assert right.status_code == 429 and 890 <= int(right["Retry-After"]) <= 15 * 60
    assert "Signing in is paused" in right.content.decode()
    assert "<code>manage.py axes_reset_username NAME</code>" in right.content.decode()
    assert not is_signed_in(attacker)
    assert attacker.get("/").status_code == 302  # still sent to the login page
    rosa.refresh_from_db()
    assert rosa.last_login is None


def test_wrong_passwords_on_many_names_lock_the_address_out(db):
    person("sam")
    attacker = Client()
    for i in range(FAILURE_LIMIT):
        sign_in(attacker, f"nobody-{i}", "password", address="10.0.0.7")
    refused = sign_in(attacker, "sam", PASSWORD, address="10.0.0.7")
    assert refused.status_code == 429 and not is_signed_in(attacker)
    elsewhere = Client()
    assert sign_in(elsewhere, "sam", PASSWORD, address="10.0.0.8").status_code == 302
    assert is_signed_in(elsewhere)


def test_a_name_guessed_from_many_addresses_is_locked_everywhere(db):
    person("rosa")
    for i in range(FAILURE_LIMIT):
        sign_in(Client(), "rosa", f"guess-{i}", address=f"10.0.1.{i}")
    owner = Client()
    assert sign_in(owner, "rosa", PASSWORD, address="10.0.2.1").status_code == 429
    assert not is_signed_in(owner)
    # Someone else at one of those addresses still signs in: one failure there is not ten.
    person("sam")
    neighbour = Client()
    assert sign_in(neighbour, "sam", PASSWORD, address="10.0.1.3").status_code == 302


def test_the_lock_lifts_once_the_cool_off_has_passed(db):
    person("rosa")
    client = Client()
    for i in range(FAILURE_LIMIT):
        sign_in(client, "rosa", f"guess-{i}")
    assert sign_in(client, "rosa", PASSWORD).status_code == 429
    # Time passes (moved in the database rather than waited for).
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert sign_in(client, "rosa", PASSWORD).status_code == 302 and is_signed_in(client)


def test_attempts_during_a_lockout_are_not_recorded(db):
    person("rosa")
    client = Client()
    for i in range(FAILURE_LIMIT):
        sign_in(client, "rosa", f"guess-{i}")
    stored = list(AccessAttempt.objects.values_list("failures_since_start", "post_data"))
    for i in range(5):
        assert sign_in(client, "rosa", f"more-{i}").status_code == 429
    assert list(AccessAttempt.objects.values_list("failures_since_start", "post_data")) == stored
    assert all("guess-" not in post for _, post in stored)  # passwords are never kept


def test_wrong_bearer_tokens_lock_their_address_out_of_the_api(db):
    reviewer = person("reviewer", decide=True)
    issued, token = ApiToken.issue(reviewer, "script")
    events = StoredEvent.objects.count()
    answers = [
        Client()
        .get("/api/runs", HTTP_AUTHORIZATION=f"Bearer mt_guess{i}", REMOTE_ADDR="10.0.3.1")
        .status_code
        for i in range(FAILURE_LIMIT + 1)
    ]
    assert answers[: FAILURE_LIMIT - 1] == [401] * (FAILURE_LIMIT - 1)
    assert answers[FAILURE_LIMIT - 1 :] == [429, 429]

    right = Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {token}", REMOTE_ADDR="10.0.3.1")
    assert right.status_code == 429 and "too many failed sign-ins" in right.json()["detail"]
    assert 890 <= int(right["Retry-After"]) <= 15 * 60  # as the form's lockout says it
    issued.refresh_from_db()
    assert issued.last_used_at is None  # the token was not even looked at
    # A token has no name to lock: wrong ones spread over many addresses lock none of them,
    # and the same script from another address is unaffected. Nothing else was written.
    for i in range(FAILURE_LIMIT):
        Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer mt_{i}", REMOTE_ADDR=f"10.0.4.{i}")
    other = Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {token}", REMOTE_ADDR="10.0.3.2")
    assert other.status_code == 200
    assert StoredEvent.objects.count() == events


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_lockout_made_in_one_process_holds_in_another():
    person("rosa")
    client = Client()
    for i in range(FAILURE_LIMIT):
        sign_in(client, "rosa", f"guess-{i}")
    # A second web process on the same database (as gunicorn's workers are): the right
    # password is refused there too.
    script = textwrap.dedent(
        f"""
        import django
        django.setup()
        from django.test import Client
        response = Client().post("/login", {{"username": "rosa", "password": {PASSWORD!r}}})
        print(response.status_code)
        """
    )
    database = connections["default"].settings_dict["NAME"]
    result = fresh_process(
        ["-c", script],
        MINUTES_DEBUG="1",
        DATABASE_URL=f"sqlite:///{database}",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "429"


def test_behind_a_proxy_the_address_counted_is_the_one_the_proxy_saw(db, settings):
    settings.BEHIND_PROXY = True
    person("sam")
    proxy = "10.0.6.1"

    def via_proxy(client, username, password, seen_by_proxy, claimed=""):
        forwarded = f"{claimed}, {seen_by_proxy}" if claimed else seen_by_proxy
        return client.post(
            "/login",
            {"username": username, "password": password},
            REMOTE_ADDR=proxy,
            HTTP_X_FORWARDED_FOR=forwarded,
        )

    attacker = Client()
    for i in range(FAILURE_LIMIT):
        # What the client writes before the proxy's own entry changes nothing.
        via_proxy(attacker, f"nobody-{i}", "password", "203.0.113.9", claimed=f"198.51.100.{i}")
    assert via_proxy(attacker, "sam", PASSWORD, "203.0.113.9").status_code == 429
    colleague = Client()  # behind the same proxy, from another address: unaffected
    assert via_proxy(colleague, "sam", PASSWORD, "203.0.113.10").status_code == 302
    assert is_signed_in(colleague) and not is_signed_in(attacker)
