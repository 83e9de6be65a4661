"""Indexes of the runs' status and team each with their start and id, newest first: the runs
list filtered by a status or a team in its default order is then a seek to the page's runs,
where SQLite took the filter's index and sorted every run it selected (a failed filter at
3,000 runs: 23,258 steps of its virtual machine against 5,936 at 200,
tests/dashboard/test_store_pages_cost_the_same_at_any_size.py)."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL (journal_store/index_build.py).
    atomic = False

    dependencies = [
        ("journal_store", "0052_claims_by_id_past_a_nul"),
    ]

    operations = [
        BuildIndex(
            model_name="runsummary",
            index=models.Index(
                fields=["status", "-started_at", "-run_id"], name="run_status_started"
            ),
        ),
        BuildIndex(
            model_name="runsummary",
            index=models.Index(fields=["team", "-started_at", "-run_id"], name="run_team_started"),
        ),
    ]
