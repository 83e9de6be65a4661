"""The review queues' items are listed newest first, of one status or all, and the API pages
them after the position of the last item shown (dashboard/api/review.py), where it paged by an
offset. No index had the position: every page, the first too, sorted every item of the status
asked for. An index of (status, position) serves a queue of one status, one of the position
the queue whole or its decided items; the status's own index is dropped, the new one begins
with it."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0035_runs_list_keyset"),
    ]

    operations = [
        migrations.AlterField(
            model_name="conflict",
            name="status",
            field=models.CharField(default="open", max_length=16),
        ),
        migrations.AlterField(
            model_name="deadletter",
            name="status",
            field=models.CharField(default="open", max_length=16),
        ),
        migrations.AddIndex(
            model_name="conflict",
            index=models.Index(fields=["status", "position"], name="conflict_status_position"),
        ),
        migrations.AddIndex(
            model_name="conflict",
            index=models.Index(fields=["position"], name="conflict_position"),
        ),
        migrations.AddIndex(
            model_name="deadletter",
            index=models.Index(fields=["status", "position"], name="deadletter_status_position"),
        ),
        migrations.AddIndex(
            model_name="deadletter",
            index=models.Index(fields=["position"], name="deadletter_position"),
        ),
    ]
