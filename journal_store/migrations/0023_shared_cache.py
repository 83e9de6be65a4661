"""The table of Django's database cache (settings.CACHES), made by `migrate` like every other
table, where `createcachetable` would be one more command to run on every fresh clone and
deployment (and to forget). Before, the cache was each process's own memory: a replay's
verdict checked in one web process was flown again in the next, and after every restart."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0022_fork_lineage"),
    ]

    operations = [
        migrations.CreateModel(
            name="CacheEntry",
            fields=[
                ("cache_key", models.CharField(max_length=255, primary_key=True, serialize=False)),
                ("value", models.TextField()),
                ("expires", models.DateTimeField(db_index=True)),
            ],
            options={
                "db_table": "minutes_cache",
            },
        ),
    ]
