"""A lockout says when it lifts, counted from the failure that caused it (attempts during a
lockout are not recorded): ten minutes into a fifteen-minute cool-off, the login page says five
minutes and the time, and Retry-After says 300 seconds, on the form and the API alike, where
each said fifteen minutes however much of the cool-off had passed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client

from tests.security.signin_helpers import FAILURE_LIMIT, PASSWORD, person, sign_in

pytestmark = pytest.mark.django_db


def ten_minutes_pass() -> None:
    """The failures recorded are put ten minutes back, as ten minutes passing would."""
    for attempt in AccessAttempt.objects.all():
        attempt.attempt_time -= timedelta(minutes=10)
        attempt.save(update_fields=["attempt_time"])


def retry_after(answer) -> int:
    return int(answer["Retry-After"])


def test_the_login_page_says_the_time_left_of_the_cool_off():
    person("rosa")
    attacker = Client()
    for i in range(FAILURE_LIMIT):
        sign_in(attacker, "rosa", f"guess-{i}")
    first = sign_in(attacker, "rosa", PASSWORD)
    assert first.status_code == 429 and 890 <= retry_after(first) <= 900
    assert "Try again in 15 minutes (it lifts at " in first.content.decode()

    ten_minutes_pass()
    later = sign_in(attacker, "rosa", PASSWORD)
    assert later.status_code == 429
    assert 290 <= retry_after(later) <= 300
    assert "Try again in 5 minutes (it lifts at " in later.content.decode()


def test_the_api_says_the_time_left_of_an_address_lockout():
    for i in range(FAILURE_LIMIT):
        Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer mt_{i}", REMOTE_ADDR="10.0.6.1")
    ten_minutes_pass()
    later = Client().get("/api/runs", HTTP_AUTHORIZATION="Bearer mt_x", REMOTE_ADDR="10.0.6.1")
    assert later.status_code == 429
    assert 290 <= retry_after(later) <= 300
    assert "it lifts at " in later.json()["detail"]


def test_the_lockout_lifts_with_the_failure_that_reached_the_limit():
    """Failures from two addresses on one name: the lock lifts when the older ones age out
    enough for the rest to be under the limit, not with the newest failure."""
    person("rosa")
    for i in range(FAILURE_LIMIT - 2):
        sign_in(Client(), "rosa", f"guess-{i}", address="10.0.7.1")
    ten_minutes_pass()
    for i in range(2):
        sign_in(Client(), "rosa", f"again-{i}", address="10.0.7.2")
    locked = sign_in(Client(), "rosa", PASSWORD, address="10.0.7.3")
    assert locked.status_code == 429
    assert 290 <= retry_after(locked) <= 300  # when the eight from 10.0.7.1 age out
