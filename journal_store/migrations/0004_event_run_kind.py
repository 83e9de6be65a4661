"""An index for what pages look up by kind: a run's answer, its first TeamStarted (issue 15)."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL, where writers would wait out a plain build
    # (journal_store/index_build.py); a concurrent build cannot run in a transaction.
    atomic = False

    dependencies = [
        ("journal_store", "0003_conflict_commit"),
    ]

    operations = [
        BuildIndex(
            model_name="storedevent",
            index=models.Index(fields=["run_id", "kind", "position"], name="journal_run_kind"),
        ),
    ]
