"""The open item of a review queue that has waited longest (journal_store/queues.py
oldest_open: the first open item by the time it was opened, then its position) is named above
the queue's page of open items, at every page, and on the metrics page. It was found by a sort
of every open item; an index of (status, created_at, position) gives it as a seek, so that a
page of the open items costs what it shows (bench/runs_pages.py, `queue page (open)`)."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL, where writers would wait out a plain build
    # (journal_store/index_build.py); a concurrent build cannot run in a transaction.
    atomic = False

    dependencies = [
        ("journal_store", "0040_run_duration"),
    ]

    operations = [
        BuildIndex(
            model_name="conflict",
            index=models.Index(
                fields=["status", "created_at", "position"], name="conflict_status_created"
            ),
        ),
        BuildIndex(
            model_name="deadletter",
            index=models.Index(
                fields=["status", "created_at", "position"], name="deadletter_status_created"
            ),
        ),
    ]
