"""DATABASE_URL's mistakes are named, and the password never appears in what is said."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env


@pytest.mark.parametrize(
    "url, said",
    [
        ("postgres://minutes:TopSecretPw@127.0.0.1:5432", "needs a database name"),
        ("postgres://minutes:TopSecretPw@127.0.0.1:5x432/minutes", "the port is not a number"),
        ("postgres://minutes:TopSecretPw@127.0.0.1:99999/minutes", "the port is not a number"),
    ],
)
def test_a_postgres_url_mistake_is_named_without_its_password(url, said):
    with pytest.raises(ImproperlyConfigured) as info:
        env.database(url, Path("/tmp"))
    message = str(info.value)
    assert message.startswith("DATABASE_URL: ") and said in message
    assert "TopSecretPw" not in message and "minutes:***@" in message


def test_a_proper_url_keeps_its_password_for_the_driver():
    found = env.database("postgres://u:p%40ss@db.example:6543/minutes", Path("/tmp"))
    assert (found["USER"], found["PASSWORD"], found["HOST"], found["PORT"]) == (
        "u",
        "p@ss",
        "db.example",
        "6543",
    )


def test_a_number_setting_past_its_bounds_is_named(monkeypatch):
    """MINUTES_IMPORT_MAX_DEPTH past a journal line's depth would take lines the journal then
    refuses to store: the setting says so at start, not an import halfway through."""
    monkeypatch.setenv("MINUTES_IMPORT_MAX_DEPTH", "100")
    with pytest.raises(ImproperlyConfigured, match="must be at most 64, got 100"):
        env.number("MINUTES_IMPORT_MAX_DEPTH", 64, 1, 64)
    monkeypatch.setenv("MINUTES_IMPORT_MAX_DEPTH", "64")
    assert env.number("MINUTES_IMPORT_MAX_DEPTH", 64, 1, 64) == 64


@pytest.mark.parametrize(
    "url, found",
    [
        ("postgres://minutes:Xy7/Qk+z9w==@127.0.0.1:55432/minutes", "'/'"),
        ("postgres://minutes:Top#SecretPw@127.0.0.1:5432/minutes", "'#'"),
        ("postgres://minutes:Top?Secret/Pw@127.0.0.1:5432/minutes", "'/' and '?'"),
    ],
)
def test_a_password_that_cuts_the_url_short_is_hidden_and_named(url, found):
    """A `/`, `?` or `#` ends a URL's user:password part where it stands: the port was then
    read out of the password ("the port is not a number") and the URL quoted in clear."""
    with pytest.raises(ImproperlyConfigured) as info:
        env.database(url, Path("/tmp"))
    message = str(info.value)
    assert message.startswith(f"DATABASE_URL: the password (or user name) holds {found}, which ")
    assert "must be percent-encoded in a URL" in message
    assert "port" not in message
    for secret in ("Xy7", "Qk+z9w", "Top", "SecretPw", "Pw@"):
        assert secret not in message
    assert "minutes:***@127.0.0.1:" in message


@pytest.mark.parametrize(
    "url, shown",
    [
        ("postgres://minutes:Xy7/Qk@h:1/db", "postgres://minutes:***@h:1/db"),
        ("postgres://minutes:p@ss@h/db", "postgres://minutes:***@h/db"),
        ("postgres://a/b:pw@h/db", "postgres://***@h/db"),
        ("redis://:pw@h:6379/0", "redis://:***@h:6379/0"),
        ("redis://h:6379/0", "redis://h:6379/0"),
    ],
)
def test_the_mask_hides_everything_before_the_last_at_but_the_user(url, shown):
    assert env.masked(url) == shown


def test_a_connect_timeout_that_is_no_number_is_refused_at_start():
    # It ended in psycopg's traceback at the first query.
    with pytest.raises(ImproperlyConfigured, match="connect_timeout must be a whole number of "):
        env.database("postgres://u:p@h/minutes?connect_timeout=abc", Path("/tmp"))
    found = env.database("postgres://u:p@h/minutes?connect_timeout=5", Path("/tmp"))
    assert found["OPTIONS"]["connect_timeout"] == "5"


def test_a_connection_that_goes_silent_is_given_up_unless_the_url_says_otherwise():
    # Without them a query on a silent connection waited until TCP gave up, or for good
    # (tests/test_a_silent_database_connection.py shows them acting).
    found = env.database("postgres://u:p@h/minutes", Path("/tmp"))["OPTIONS"]
    assert {key: found[key] for key in env.SILENCE_BOUND} == {
        "connect_timeout": "10",
        "keepalives": "1",
        "keepalives_idle": "30",
        "keepalives_interval": "10",
        "keepalives_count": "3",
        "tcp_user_timeout": "60000",
    }
    url = "postgres://u:p@h/minutes?keepalives_idle=5&tcp_user_timeout=0&keepalives=0"
    mine = env.database(url, Path("/tmp"))["OPTIONS"]
    assert (mine["keepalives_idle"], mine["tcp_user_timeout"], mine["keepalives"]) == (
        "5",
        "0",
        "0",
    )
    assert mine["keepalives_count"] == "3"


@pytest.mark.parametrize(
    "option, said",
    [
        ("keepalives_idle=30s", "keepalives_idle must be a whole number of seconds, got '30s'"),
        ("keepalives=yes", "keepalives must be 1 (on) or 0 (off), got 'yes'"),
        ("keepalives=2", "keepalives must be 1 (on) or 0 (off), got '2'"),
        ("keepalives_count=-1", "keepalives_count must be a whole number of probes, got '-1'"),
        ("tcp_user_timeout=1.5", "tcp_user_timeout must be a whole number of milliseconds"),
    ],
)
def test_a_bound_the_url_gives_that_libpq_cannot_read_is_refused_at_start(option, said):
    # libpq refused it at the first query, in a traceback.
    with pytest.raises(ImproperlyConfigured, match="^DATABASE_URL: " + re.escape(said)):
        env.database(f"postgres://u:p@h/minutes?{option}", Path("/tmp"))
