"""A run a projector stopped applying (journal_store/stopped.py): one event whose fold raised
(a fold's bug meeting an unusual event, or a row written into the table by some other way)
rolled back the whole catch-up, every projector stayed at its checkpoint, and every page that
catches up failed for every run until somebody edited the database. Now that run alone is set
aside for that projector, with the event and the error, until a rebuild tries it again."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0041_queue_oldest_open"),
    ]

    operations = [
        migrations.CreateModel(
            name="StoppedView",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("projector", models.CharField(max_length=64)),
                ("run_id", models.CharField(max_length=64)),
                ("position", models.BigIntegerField()),
                ("kind", models.CharField(max_length=64)),
                ("error", models.TextField()),
            ],
            options={
                "db_table": "projection_stopped",
                "indexes": [models.Index(fields=["run_id"], name="stopped_run")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("projector", "run_id"), name="stopped_projector_run"
                    )
                ],
            },
        ),
    ]
