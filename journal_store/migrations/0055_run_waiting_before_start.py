"""An index of the runs one of whose conflicts or dead letters, still waiting for a person, was
opened before the run started (a journal whose times run backwards: an imported one, clocks
that disagree), by the day they started: the metrics' oldest open item under a date filter
reads these runs of the filter's days, and the open items opened on or after its first day,
where it walked every open item opened before that day (services/metrics.py oldest_open).
Partial: few runs are in it."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL (journal_store/index_build.py).
    atomic = False

    dependencies = [
        ("journal_store", "0054_run_waiting_since"),
    ]

    operations = [
        BuildIndex(
            model_name="runsummary",
            index=models.Index(
                fields=["started_on"],
                condition=models.Q(waiting_since__lt=models.F("started_at")),
                name="run_waiting_before_start",
            ),
        ),
    ]
