"""The runs list is paged by a cursor, the (value, run id) of the last run a page showed
(dashboard/run_pages.py), where it was paged by an offset, whose cost grew with how far into
the list a page was. Each order of the list gets an index of its column and the run id, the
same way, so that a page is a seek and a read of the rows it shows: newest and oldest first
read one index in either direction; status, tokens, cost and findings, which had no index and
were sorted whole at every page, one each. The status's index of its own and the start's two
are dropped: the new ones begin with those columns and serve whatever they served (a filter by
status, the latest start, the runs started since a mark), and each index is one more write of
every change to a run's row.

No NULLs placement: a page reads the runs without a value apart (`IS NULL`, then by run id),
so on PostgreSQL the index's default (NULLs first when descending) serves both directions,
where the start's index was made NULLS LAST (migration 0016) for a list sorted whole."""

from typing import Any

from django.db import migrations, models


def started_nulls_last(apps: Any, schema_editor: Any) -> None:
    """Going back: the start's index as migration 0016 left it on PostgreSQL."""
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX IF EXISTS run_started_desc")
    schema_editor.execute(
        "CREATE INDEX run_started_desc ON projection_run (started_at DESC NULLS LAST)"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0034_pending_pushes"),
    ]

    operations = [
        # Backwards, after the start's index is made again below: as 0016 made it.
        migrations.RunPython(migrations.RunPython.noop, started_nulls_last),
        migrations.RemoveIndex(model_name="runsummary", name="run_started_desc"),
        migrations.AlterField(
            model_name="runsummary",
            name="status",
            field=models.CharField(max_length=32),
        ),
        migrations.AlterField(
            model_name="runsummary",
            name="started_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.AddIndex(
            model_name="runsummary",
            index=models.Index(fields=["-started_at", "-run_id"], name="run_started_id"),
        ),
        migrations.AddIndex(
            model_name="runsummary",
            index=models.Index(fields=["status", "run_id"], name="run_status_id"),
        ),
        migrations.AddIndex(
            model_name="runsummary",
            index=models.Index(fields=["-tokens", "-run_id"], name="run_tokens_id"),
        ),
        migrations.AddIndex(
            model_name="runsummary",
            index=models.Index(fields=["-cost", "-run_id"], name="run_cost_id"),
        ),
        migrations.AddIndex(
            model_name="runsummary",
            index=models.Index(fields=["-findings_count", "-run_id"], name="run_findings_id"),
        ),
    ]
