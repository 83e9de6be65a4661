"""The suite's PostgreSQL backend flushes by DELETE (tests/postgres_backend/base.py): after a
transactional test every table is empty, rows tied by a foreign key included, and the
sequences go on where they were, as after Django's TRUNCATE."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connections

from tests.conftest import ALIASES, need_postgres

pytestmark = pytest.mark.django_db(databases=ALIASES, transaction=True)


@pytest.fixture
def postgres():
    need_postgres()
    return "postgres"


def test_a_flush_deletes_rather_than_truncates(postgres):
    tables = ["auth_user", "auth_user_user_permissions"]
    statements = connections[postgres].ops.sql_flush(no_style(), tables)
    assert all(s.startswith("DELETE FROM") for s in statements), statements
    assert len(statements) == 2


def test_a_flush_empties_tables_tied_by_a_foreign_key_and_keeps_the_sequence(postgres):
    first = User.objects.db_manager(postgres).create_user("first")
    first.user_permissions.add(Permission.objects.using(postgres).first())
    # As a transactional test's teardown calls it (django.test.TransactionTestCase).
    call_command("flush", database=postgres, interactive=False, verbosity=0, reset_sequences=False)
    assert not User.objects.using(postgres).exists()
    assert not User.user_permissions.through.objects.using(postgres).exists()
    # Every app's permissions are there after a flush (the suite's keeps them: tests/suite_flush).
    assert Permission.objects.using(postgres).filter(codename="decide").exists()
    second = User.objects.db_manager(postgres).create_user("second")
    assert second.pk > first.pk
