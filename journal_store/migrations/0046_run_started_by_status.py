"""An index of the runs' summaries by who started them and their status: a start counts the
person's live runs (settings.RUNS_PER_PERSON, services/run_cap.py) by a seek on it, however
many runs the store holds, where the count read every run's row."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL, where writers would wait out a plain build
    # (journal_store/index_build.py); a concurrent build cannot run in a transaction.
    atomic = False

    dependencies = [
        ("journal_store", "0045_claims_by_id_index"),
    ]

    operations = [
        BuildIndex(
            model_name="runsummary",
            index=models.Index(fields=["started_by", "status"], name="run_started_by_status"),
        ),
    ]
