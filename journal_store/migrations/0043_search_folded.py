"""The search index keeps its documents in NFKC (journal_store/search.py `folded`), as a
search's words are now read: a full-width letter or a ligature ("foo" in full-width letters,
"ﬁle") was a word of its own to both indexes, found by nobody typing "foo" or "file", and the
other way round.

The documents stored already are folded as the projector now writes them: a document shorter
than DOC_MAX holds its event's whole text, and is folded where it stands; one DOC_MAX long may
have been cut, and is written again from its event (folded, then cut). Documents in NFKC
already (all-ASCII text, most of them) are left alone. A batch at a time, each committed: on a
big table an interrupted migration keeps the batches it did, and run again skips them (they
are in NFKC by then) without writing anything twice. PostgreSQL's tsvector is generated from
the body, and follows it."""

import unicodedata
from typing import Any

from django.db import migrations, transaction

BATCH = 1_000


def fold(apps: Any, schema_editor: Any) -> None:
    from journal_store import search

    connection = schema_editor.connection
    key = "rowid" if connection.vendor == "sqlite" else "position"
    last = -1
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {key}, body FROM {search.TABLE} WHERE {key} > %s ORDER BY {key} LIMIT %s",
                [last, BATCH],
            )
            rows = cursor.fetchall()
        if not rows:
            return
        last = rows[-1][0]
        changed = []
        for position, body in rows:
            if len(body) >= search.DOC_MAX:
                # Perhaps cut before it was folded: the event's whole text, as the projector
                # folds it now (folding first can end the cut elsewhere).
                with connection.cursor() as cursor:
                    cursor.execute("SELECT data FROM journal_event WHERE position = %s", [position])
                    found = cursor.fetchone()
                again = search.text_of(found[0]) if found else search.folded(body)[: search.DOC_MAX]
            elif unicodedata.is_normalized("NFKC", body):
                continue
            else:
                again = search.folded(body)[: search.DOC_MAX]
            if again != body:
                changed.append((again, position))
        if changed:
            with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
                cursor.executemany(f"UPDATE {search.TABLE} SET body = %s WHERE {key} = %s", changed)


class Migration(migrations.Migration):
    # Each batch its own transaction, so that an interrupted run keeps what it did.
    atomic = False

    dependencies = [
        ("journal_store", "0042_a_run_a_view_stopped_at"),
    ]

    operations = [migrations.RunPython(fold, migrations.RunPython.noop, atomic=False)]
