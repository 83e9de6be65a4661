"""A search of one or two characters served by the indexes too (journal_store/substrings.py),
where a text too short for a trigram read every row to say that few held it (the runs list at
20,000 runs: 25 ms a page on SQLite, 42 on PostgreSQL). Each copy of the searched columns is
made again, as 0058 and 0059 made them: SQLite's with a column of each searched column's end
and a view of its trigrams, PostgreSQL's with an index of each column's pieces."""

from typing import Any

from django.db import migrations

from journal_store.queues import QUEUES
from journal_store.substrings import RUNS


def rebuild(apps: Any, schema_editor: Any) -> None:
    postgres = schema_editor.connection.vendor == "postgresql"
    for searched in (RUNS, *(queue.searched for queue in QUEUES)):
        for statement in searched.postgres_drop() if postgres else searched.sqlite_drop():
            schema_editor.execute(statement)
        for statement in searched.postgres() if postgres else searched.sqlite():
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0059_queue_words"),
    ]

    # Backwards: the copies as made here serve the searches as 0059 left them.
    operations = [migrations.RunPython(rebuild, migrations.RunPython.noop)]
