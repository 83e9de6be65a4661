"""A run's duration kept in its row, and an index of it and the run id, so that the runs list
sorted by duration pages by a seek (dashboard/run_pages.py), as its other sorts do. It was
worked out at every page from the clock (`COALESCE(finished_at, now) - started_at - waited`),
which no index can hold: a page by duration sorted every run the filter selected, the first
page too. A duration is kept once a run's clock has stopped (journal_store/run_columns.py
stopped_after); a run still running has none (NULL) and comes last in the list's order.

The runs stored already get theirs from their columns, as the projector now works it out from
their summaries (finished_at less started_at less waited, each from the same fold)."""

from typing import Any

from django.db import migrations, models
from django.db.models import DurationField, ExpressionWrapper, F


def fill(apps: Any, schema_editor: Any) -> None:
    runs = apps.get_model("journal_store", "RunSummary").objects.using(
        schema_editor.connection.alias
    )
    stopped = runs.filter(started_at__isnull=False, finished_at__isnull=False)
    stopped.update(
        duration=ExpressionWrapper(
            F("finished_at") - F("started_at") - F("waited"), output_field=DurationField()
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0039_paid_failures_in_metrics"),
    ]

    operations = [
        migrations.AddField(
            model_name="runsummary",
            name="duration",
            field=models.DurationField(null=True),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="runsummary",
            index=models.Index(fields=["-duration", "-run_id"], name="run_duration_id"),
        ),
    ]
