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
