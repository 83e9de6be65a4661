"""A run's summary names the team run it is the single-agent baseline of, so that a team run's
page finds its baselines by an index: it read every run's TeamStarted, a scan of the whole
journal, at each view and each poll of the run's header.

The runs already projected are filled in here, once, from their TeamStarted (and their stored
summary state gets the key, so that their next event does not set the column back to blank).
"""

import json
from typing import Any

from django.db import migrations, models


def fill(apps: Any, schema_editor: Any) -> None:
    StoredEvent = apps.get_model("journal_store", "StoredEvent")
    RunSummary = apps.get_model("journal_store", "RunSummary")
    RunState = apps.get_model("journal_store", "RunState")
    alias = schema_editor.connection.alias
    started = StoredEvent.objects.using(alias).filter(
        kind="TeamStarted", data__contains='"baseline_of"'
    )
    for run_id, data in started.values_list("run_id", "data").iterator():
        linked = (json.loads(data).get("config") or {}).get("baseline_of")
        if not isinstance(linked, str) or not linked or not run_id:
            continue
        RunSummary.objects.using(alias).filter(run_id=run_id).update(baseline_of=linked)
        for stored in RunState.objects.using(alias).filter(run_id=run_id, fold="summary"):
            state = json.loads(stored.state)
            state["baseline_of"] = linked
            stored.state = json.dumps(state)
            stored.save(update_fields=["state"])


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0016_run_started_nulls_last"),
    ]

    operations = [
        migrations.AddField(
            model_name="runsummary",
            name="baseline_of",
            field=models.CharField(blank=True, db_index=True, max_length=64),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
