"""A PostgreSQL database whose locale folds the case of ASCII letters only (C, POSIX) is named
by a system check (minutes.W001, run by `migrate` and `manage.py check --database`) and on
`make run`'s first screen: its searches do not find "Émile" by "émile", which SQLite's do
(journal_store/anycase.py). A database made with a UTF-8 locale is not named."""

from __future__ import annotations

import os
import uuid
from urllib.parse import urlsplit

import pytest
from django.core import checks
from django.db import connections

from journal_store.checks import ASCII_CASE, ascii_case_only, folds_ascii_only
from tests.services import PG_ENV

pytestmark = pytest.mark.skipif(
    not os.environ.get(PG_ENV), reason="needs the suite's PostgreSQL server"
)


@pytest.fixture
def made_with():
    """A database of its own on the suite's server, made with the locale given; its
    connection, dropped after."""
    import psycopg

    server = os.environ[PG_ENV]
    made: list[tuple[object, str]] = []

    def make(locale: str):
        name = f"case_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE \"{name}\" TEMPLATE template0 LOCALE '{locale}'")
        connection = psycopg.connect(urlsplit(server)._replace(path=f"/{name}").geturl())
        made.append((connection, name))
        return connection

    yield make
    for connection, name in made:
        connection.close()
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_c_locale_folds_ascii_only_and_a_utf8_one_every_letter(made_with):
    assert ascii_case_only(made_with("C").cursor())
    assert not ascii_case_only(made_with("C.UTF-8").cursor())


@pytest.mark.django_db(databases=["default", "postgres"])
def test_the_check_names_a_database_that_folds_ascii_only():
    """The suite's database, whichever locale its server was made with (the environment's)."""
    with connections["postgres"].cursor() as cursor:
        cursor.execute("SELECT UPPER('émile')")
        (upper,) = cursor.fetchone()
    found = checks.run_checks(databases=["postgres"], tags=[checks.Tags.database])
    named = [c for c in found if c.id == ASCII_CASE.id]
    assert named == ([] if upper == "ÉMILE" else [ASCII_CASE]), upper
    assert "ASCII letters only" in ASCII_CASE.msg and "UTF-8 locale" in ASCII_CASE.hint


@pytest.mark.django_db
def test_sqlite_is_never_named():
    assert not folds_ascii_only("default")
    found = checks.run_checks(databases=["default"], tags=[checks.Tags.database])
    assert ASCII_CASE not in found
