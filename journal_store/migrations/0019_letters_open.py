"""How many of a run's dead letters still wait for a person (`letters_open`), beside its open
conflicts, so that the metrics page says what is waiting now: its "waiting for people" summed
only the waits a person had ended, and read 0 while letters and conflicts sat undecided.

The runs already projected are filled in from their stored metrics state (the letters it keeps
open until a decision), and the rollup is summed anew. `manage.py rebuild_projections` gives
the same.
"""

import json
from typing import Any

from django.db import migrations, models


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import metrics_days

    alias = schema_editor.connection.alias
    runs = apps.get_model("journal_store", "RunSummary").objects.using(alias)
    states = apps.get_model("journal_store", "RunState").objects.using(alias)
    chosen = states.filter(fold="metrics").values_list("run_id", "state")
    for run_id, text in chosen.iterator(chunk_size=2_000):
        waiting = len(json.loads(text).get("letters") or {})
        if waiting:
            runs.filter(run_id=run_id).update(letters_open=waiting)
    rollup = apps.get_model("journal_store", "MetricsDay").objects.using(alias)
    metrics_days.refill(runs, rollup)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0018_fork_inherited"),
    ]

    operations = [
        migrations.AddField(
            model_name="metricsday",
            name="letters_open",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="runsummary",
            name="letters_open",
            field=models.IntegerField(default=0),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
