"""An index of the journal's stream names in byte order on PostgreSQL, for the reads of every
stream whose name starts with a prefix (DjangoJournal.read_prefix: a run's specialists'
`worker-<run>-...` streams, which a replay, a trace, a start and a refill read): a seek to
those names, where a LIKE read the whole table, its cost the store's and not the run's.

The (stream, version) index is in the database's collation, which may be a locale's, whose
order is not the names' bytes: a range of names that start with a prefix is no range in it.
Under COLLATE "C" it is, so the index is on that expression, which the read spells the same
way (journal_store/journal.py STREAM_BYTES). SQLite needs none: its (stream, version) index is
in byte order already. Not in the model's Meta: SQLite has no collation "C"."""

from django.db import migrations

from journal_store.index_build import BuildIndexFromSQL

NAME = "journal_stream_prefix"


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL, where writers would wait out a plain build
    # (journal_store/index_build.py); a concurrent build cannot run in a transaction.
    atomic = False

    dependencies = [
        ("journal_store", "0049_open_effects"),
    ]

    operations = [
        BuildIndexFromSQL(NAME, "journal_event", {"postgresql": '((stream COLLATE "C"))'}),
    ]
