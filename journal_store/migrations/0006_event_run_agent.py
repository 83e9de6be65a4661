"""An index for the timeline's agent filter: the agents of a run, one seek each (issue 15)."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL, where writers would wait out a plain build
    # (journal_store/index_build.py); a concurrent build cannot run in a transaction.
    atomic = False

    dependencies = [
        ("journal_store", "0005_fold_rows"),
    ]

    operations = [
        BuildIndex(
            model_name="storedevent",
            index=models.Index(fields=["run_id", "agent"], name="journal_run_agent"),
        ),
    ]
