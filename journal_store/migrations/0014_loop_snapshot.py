from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0013_trace_fold"),
    ]

    operations = [
        migrations.CreateModel(
            name="LoopSnapshot",
            fields=[
                (
                    "stream",
                    models.CharField(max_length=200, primary_key=True, serialize=False),
                ),
                ("version", models.PositiveIntegerField()),
                ("data", models.BinaryField()),
            ],
            options={
                "db_table": "loop_snapshot",
            },
        ),
    ]
