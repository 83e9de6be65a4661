"""Migration 0052 on PostgreSQL: the claims' id index is built again on an expression a NUL in
a claim cannot fail (tests/coordination/test_a_claim_holding_a_nul_appends.py), beside the old
one, which is then dropped, both concurrently; migrating back builds the old one again and
drops the new one."""

from __future__ import annotations

import pytest
from django.db import connections
from django.db.migrations.executor import MigrationExecutor

from tests.conftest import need_postgres, on_every_backend

pytestmark = on_every_backend(transaction=True)  # the postgres fixture below skips without it

NEW, OLD = "journal_claims_by_id_text", "journal_claims_by_id"


@pytest.fixture
def postgres():
    need_postgres()
    connection = connections["postgres"]
    connection.ensure_connection()
    yield connection
    executor = MigrationExecutor(connection)  # as migrate left it, for the tests after
    executor.migrate(executor.loader.graph.leaf_nodes("journal_store"))


def indexes(connection) -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'journal_event' "
            "AND indexname IN (%s, %s)",
            [NEW, OLD],
        )
        return dict(cursor.fetchall())


def test_the_index_is_replaced_and_migrating_back_restores_the_old_one(postgres):
    now = indexes(postgres)
    assert list(now) == [NEW] and "replace(data, '\\u0000'::text, '\\u0020'::text)" in now[NEW]
    MigrationExecutor(postgres).migrate([("journal_store", "0051_beat_round")])
    before = indexes(postgres)
    assert list(before) == [OLD] and "(data)::jsonb ->> 'claim_id'" in before[OLD]
    executor = MigrationExecutor(postgres)
    executor.migrate(executor.loader.graph.leaf_nodes("journal_store"))
    assert indexes(postgres) == now
