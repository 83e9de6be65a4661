"""/healthz says whether this server can serve: the database answers and is migrated."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_migrated_database_is_healthy():
    answer = Client().get("/healthz")
    assert (answer.status_code, answer.content) == (200, b"ok")


def test_a_database_behind_the_code_says_to_migrate():
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM django_migrations WHERE app = 'journal_store' AND name = "
            "(SELECT MAX(name) FROM django_migrations WHERE app = 'journal_store')"
        )
    answer = Client().get("/healthz")
    assert answer.status_code == 503
    text = answer.content.decode()
    assert text.startswith("the database is not migrated (journal_store.")
    assert text.endswith("): run manage.py migrate")
