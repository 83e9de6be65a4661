"""Each fold's state in a row of its own, notes, and keyed findings (issue 15).

The runs projector used to keep one JSON blob per run and rewrite every row of the run on each
batch; it now keeps a row per (run, fold) and writes only what a batch changes. The old blobs
cannot be split into the new states (they held whole views, not what later events need), so
this migration empties the runs projector's read models and moves its checkpoint back to 0:
the next catch-up (any page, any step) rebuilds them from the journal, as
`manage.py rebuild_projections --only runs` would.
"""

from typing import Any

from django.db import migrations, models


def forget_the_runs_projection(apps: Any, schema_editor: Any) -> None:
    alias = schema_editor.connection.alias
    for name in ("RunSummary", "BillLine", "ThreadMessage", "AuditEntry", "Finding"):
        apps.get_model("journal_store", name).objects.using(alias).all().delete()
    apps.get_model("journal_store", "Checkpoint").objects.using(alias).filter(name="runs").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0004_event_run_kind"),
    ]

    operations = [
        migrations.RunPython(forget_the_runs_projection, migrations.RunPython.noop),
        migrations.DeleteModel(name="RunState"),
        migrations.CreateModel(
            name="RunState",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("run_id", models.CharField(max_length=64)),
                ("fold", models.CharField(max_length=64)),
                ("state", models.TextField()),
            ],
            options={
                "db_table": "projection_fold_state",
                "constraints": [
                    models.UniqueConstraint(fields=("run_id", "fold"), name="fold_state_run_fold")
                ],
            },
        ),
        migrations.CreateModel(
            name="FoldNote",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("run_id", models.CharField(max_length=64)),
                ("fold", models.CharField(max_length=64)),
                ("key", models.CharField(max_length=64)),
                ("position", models.BigIntegerField()),
            ],
            options={
                "db_table": "projection_fold_note",
                "indexes": [
                    models.Index(
                        fields=["run_id", "fold", "key", "position"], name="fold_note_lookup"
                    )
                ],
            },
        ),
        migrations.AddField(
            model_name="finding",
            name="key",
            field=models.CharField(default="", max_length=64),
        ),
        migrations.AddConstraint(
            model_name="finding",
            constraint=models.UniqueConstraint(
                fields=("run_id", "kind", "key"), name="finding_run_kind_key"
            ),
        ),
    ]
