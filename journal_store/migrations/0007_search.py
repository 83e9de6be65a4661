"""Full-text search over events (issue 19): an FTS5 table on SQLite, a tsvector with a GIN
index on PostgreSQL. Kept by the search projector (journal_store/search.py)."""

from typing import Any

from django.db import migrations

# The rowid is the event's position: FTS5 walks matches in rowid order, so "the newest hits"
# stops after the first few instead of sorting every match of a common word.
SQLITE = [
    "CREATE VIRTUAL TABLE search_event USING fts5("
    "run_id UNINDEXED, kind UNINDEXED, body, tokenize = 'unicode61')",
]
POSTGRES = [
    "CREATE TABLE search_event ("
    "position bigint PRIMARY KEY, run_id varchar(64) NOT NULL, kind varchar(64) NOT NULL, "
    "body text NOT NULL, tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED)",
    "CREATE INDEX search_event_tsv ON search_event USING gin (tsv)",
    "CREATE INDEX search_event_run ON search_event (run_id, position)",
]


def create(apps: Any, schema_editor: Any) -> None:
    statements = POSTGRES if schema_editor.connection.vendor == "postgresql" else SQLITE
    for statement in statements:
        schema_editor.execute(statement)


def drop(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute("DROP TABLE IF EXISTS search_event")


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0006_event_run_agent"),
    ]

    operations = [migrations.RunPython(create, drop)]
