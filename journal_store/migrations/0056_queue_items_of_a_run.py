"""Indexes of each review queue's items by run, status and position: one run's items of a
status (a queue's page filtered to a run, as a run's page links to it, its oldest open item,
the API's `run`) are a seek, where SQLite took the index of the status and the position (or
the time), which gives the page's order, and walked every item of the status until the run's
(the open dead letters of one run: 2,978 SQLite steps with 200 runs, 7,078 with 3,000)."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL (journal_store/index_build.py).
    atomic = False

    dependencies = [
        ("journal_store", "0055_run_waiting_before_start"),
    ]

    operations = [
        BuildIndex(
            model_name="deadletter",
            index=models.Index(
                fields=["run_id", "status", "position"], name="deadletter_run_status"
            ),
        ),
        BuildIndex(
            model_name="conflict",
            index=models.Index(fields=["run_id", "status", "position"], name="conflict_run_status"),
        ),
    ]
