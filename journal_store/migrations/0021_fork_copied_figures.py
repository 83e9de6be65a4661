"""A fork's summary says what its copied prefix held of every figure the metrics rollup sums
besides tokens and cost (claims, handoffs, deliveries, conflicts, seconds waited...): the rollup
takes them off the fork's share, where it counted them under the parent and under each fork.

The forks already projected are filled in here: their metrics states get the snapshot the fold
now takes at RunForked (the copied prefix folded again, up to its last RunForked), their column
is set from it, and the rollup is summed anew. `manage.py rebuild_projections` gives the same.
"""

import json
from typing import Any

from django.db import migrations, models


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import metrics_days
    from journal_store.journal import DjangoJournal
    from runtime.flight import run_records
    from runtime.metrics import DISCARD, Metrics

    alias = schema_editor.connection.alias
    runs = apps.get_model("journal_store", "RunSummary").objects.using(alias)
    states = apps.get_model("journal_store", "RunState").objects.using(alias)
    journal = DjangoJournal(alias)
    fold = Metrics()
    for run_id in runs.exclude(parent_id="").values_list("run_id", flat=True).iterator():
        records = run_records(journal, run_id)
        forked = [i for i, r in enumerate(records) if r.event.kind == "RunForked"]
        if not forked:
            continue
        prefix = fold.start()
        for rec in records[: forked[-1] + 1]:  # up to its own RunForked, which snapshots
            if fold.kinds is None or rec.event.kind in fold.kinds:
                fold.step(prefix, rec, DISCARD)
        copied = prefix["copied"]
        for stored in states.filter(run_id=run_id, fold="metrics"):
            state = json.loads(stored.state)
            state["copied"] = copied
            stored.state = json.dumps(state, separators=(",", ":"))
            stored.save(update_fields=["state"])
        runs.filter(run_id=run_id).update(copied_figures=copied)
    rollup = apps.get_model("journal_store", "MetricsDay").objects.using(alias)
    metrics_days.refill(runs, rollup)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0020_run_waiting_for"),
    ]

    operations = [
        migrations.AddField(
            model_name="runsummary",
            name="copied_figures",
            field=models.JSONField(default=dict),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
