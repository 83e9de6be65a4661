"""An index for what pages look up by kind: a run's answer, its first TeamStarted (issue 15)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0003_conflict_commit"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="storedevent",
            index=models.Index(fields=["run_id", "kind", "position"], name="journal_run_kind"),
        ),
    ]
