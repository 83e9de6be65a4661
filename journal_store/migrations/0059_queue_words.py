"""A review queue's words (a dead letter's reason, error and id; a conflict's subject,
predicate and id) served by an index of trigrams (journal_store/substrings.py), as the runs
list's Search is since 0058, where words no item held read every item of the queue to say so.
A table of each item's searched columns beside each queue, kept by triggers and filled here."""

from typing import Any

from django.db import migrations

from journal_store.queues import QUEUES


def create(apps: Any, schema_editor: Any) -> None:
    postgres = schema_editor.connection.vendor == "postgresql"
    for queue in QUEUES:
        for statement in queue.searched.postgres() if postgres else queue.searched.sqlite():
            schema_editor.execute(statement)


def drop(apps: Any, schema_editor: Any) -> None:
    postgres = schema_editor.connection.vendor == "postgresql"
    for queue in QUEUES:
        searched = queue.searched
        for statement in searched.postgres_drop() if postgres else searched.sqlite_drop():
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0058_run_words"),
    ]

    operations = [migrations.RunPython(create, drop)]
