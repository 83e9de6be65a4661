"""An index of the runs' summaries by who started them and their status: a start counts the
person's live runs (settings.RUNS_PER_PERSON, services/run_cap.py) by a seek on it, however
many runs the store holds, where the count read every run's row."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0045_claims_by_id_index"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="runsummary",
            index=models.Index(fields=["started_by", "status"], name="run_started_by_status"),
        ),
    ]
