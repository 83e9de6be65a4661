"""DATABASE_URL's mistakes are named, and the password never appears in what is said."""

from __future__ import annotations

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
