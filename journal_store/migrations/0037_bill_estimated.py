"""A bill line's calls whose usage Minutes estimated (runtime.events.Usage.estimated). The
lines projected before it get 0, which is what a rebuild gives them: no usage was marked
estimated before the mark was kept."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0036_queue_items_by_position"),
    ]

    operations = [
        migrations.AddField(
            model_name="billline",
            name="estimated",
            field=models.IntegerField(default=0),
        ),
    ]
