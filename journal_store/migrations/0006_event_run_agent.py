"""An index for the timeline's agent filter: the agents of a run, one seek each (issue 15)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0005_fold_rows"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="storedevent",
            index=models.Index(fields=["run_id", "agent"], name="journal_run_agent"),
        ),
    ]
