"""Indexes of the runs waiting for a person by team, by scenario and by model, each with the
time its oldest open item was opened (`waiting_since`): the metrics' oldest open item of a
team's runs (or a scenario's, a model's) is sought from the least of those, where it walked
every open item oldest first until one of the filter's runs, every item opened before a team's
first if the team began late (services/metrics.py oldest_open). Partial: only the runs that
wait are in them."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL (journal_store/index_build.py).
    atomic = False

    dependencies = [
        ("journal_store", "0056_queue_items_of_a_run"),
    ]

    operations = [
        BuildIndex(
            model_name="runsummary",
            index=models.Index(
                fields=[column, "waiting_since"],
                condition=models.Q(waiting_since__isnull=False),
                name=f"run_waiting_{column}",
            ),
        )
        for column in ("team", "scenario", "model")
    ]
