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

from journal_store.checks import ASCII_CASE, ascii_case_only, folds_ascii_only
from tests.services import PG_ENV
from tests.test_manage_says_what_is_wrong import manage

pytestmark = pytest.mark.skipif(
    not os.environ.get(PG_ENV), reason="needs the suite's PostgreSQL server"
)


@pytest.fixture
def made_with():
    """A database of its own on the suite's server, made with the locale given; its address,
    dropped after."""
    import psycopg

    server = os.environ[PG_ENV]
    made: list[str] = []

    def make(locale: str) -> str:
        name = f"case_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE \"{name}\" TEMPLATE template0 LOCALE '{locale}'")
        made.append(name)
        return urlsplit(server)._replace(path=f"/{name}").geturl()

    yield make
    for name in made:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_c_locale_folds_ascii_only_and_a_utf8_one_every_letter(made_with):
    import psycopg

    with (
        psycopg.connect(made_with("C")) as ascii_only,
        psycopg.connect(made_with("C.UTF-8")) as utf8,
    ):
        assert ascii_case_only(ascii_only.cursor())
        assert not ascii_case_only(utf8.cursor())


def test_migrate_names_a_database_that_folds_ascii_only(made_with, tmp_path):
    """What someone pointing Minutes at their PostgreSQL runs first: `migrate` (its plan, which
    runs the database's checks as migrating does, and writes nothing)."""

    def migrate(url: str) -> str:
        done = manage("migrate", "--plan", DATABASE_URL=url, MINUTES_HOME=str(tmp_path / "home"))
        assert done.returncode == 0, done.stderr
        return done.stderr

    said = migrate(made_with("C"))
    assert f"({ASCII_CASE.id}) {ASCII_CASE.msg}" in said, said
    assert ASCII_CASE.hint in said
    assert ASCII_CASE.id not in migrate(made_with("C.UTF-8"))
    assert "ASCII letters only" in ASCII_CASE.msg and "UTF-8 locale" in ASCII_CASE.hint


@pytest.mark.django_db
def test_sqlite_is_never_named():
    assert not folds_ascii_only("default")
    found = checks.run_checks(databases=["default"], tags=[checks.Tags.database])
    assert ASCII_CASE not in found
