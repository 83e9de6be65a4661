"""The runs list's Search (a task, a run id) served by an index of trigrams
(journal_store/substrings.py), where a search that matched no run read every run to say so: a
table of each run's id and task beside the runs, kept by triggers and filled here. On SQLite an
FTS5 table; on PostgreSQL a table with pg_trgm's indexes, new and written by nothing else, so
built here plainly in one transaction."""

from typing import Any

from django.db import migrations

from journal_store.substrings import RUNS, postgres_shared_drop


def create(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        # A trusted extension since PostgreSQL 13: the database's owner may install it (or
        # anyone with CREATE on the database); IF NOT EXISTS asks nothing where it is.
        schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        statements = RUNS.postgres()
    else:
        statements = RUNS.sqlite()
    for statement in statements:
        schema_editor.execute(statement)


def drop(apps: Any, schema_editor: Any) -> None:
    postgres = schema_editor.connection.vendor == "postgresql"
    # The last copy gone (0059's went before): the functions the copies shared go too.
    dropped = [*RUNS.postgres_drop(), *postgres_shared_drop()] if postgres else RUNS.sqlite_drop()
    for statement in dropped:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0057_runs_waiting_by_team"),
    ]

    operations = [migrations.RunPython(create, drop)]
