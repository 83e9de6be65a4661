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


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "10.0.0.7", "not-listed.example"])
def test_healthz_answers_whatever_host_is_asked(settings, host):
    """Compose's probe asks http://127.0.0.1:8000/healthz; an operator who set
    MINUTES_ALLOWED_HOSTS to their real host name got a 400 (DisallowedHost) there, and the
    web container never became healthy."""
    settings.ALLOWED_HOSTS = ["minutes.example.com"]
    answer = Client(HTTP_HOST=host).get("/healthz")
    assert (answer.status_code, answer.content) == (200, b"ok")
    # Only that path: every other page still refuses a host it does not serve.
    assert Client(HTTP_HOST=host).get("/login").status_code == 400


def test_healthz_answers_plain_http_without_a_redirect_in_production(settings):
    settings.ALLOWED_HOSTS = ["minutes.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    answer = Client(HTTP_HOST="127.0.0.1:8000").get("/healthz")
    assert (answer.status_code, answer.content) == (200, b"ok")
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert Client(HTTP_HOST="minutes.example.com").get("/login").status_code == 301
