"""The suite's SQLite test database commits without waiting for the disk (tests/settings.py):
WAL's synchronous=NORMAL, where Minutes' own settings ask FULL."""

from __future__ import annotations

import pytest
from django.db import connection

from config import env


@pytest.mark.django_db
def test_the_suites_sqlite_commits_without_waiting_for_the_disk(tmp_path):
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA synchronous")
        assert cursor.fetchone()[0] == 1  # NORMAL
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
    # What the processes the tests start read, from DATABASE_URL, is unchanged.
    options = env.database(f"sqlite:///{tmp_path / 'x.sqlite3'}", tmp_path)["OPTIONS"]
    assert "PRAGMA synchronous=FULL" in options["init_command"]
