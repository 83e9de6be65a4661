"""A fork's summary says which of its tokens (and their cost) were its parent's: the prefix it
copied with its journal. The metrics rollup takes them off the fork's share, where it summed
them twice, once under the parent and once under each of its forks.

The forks already projected are filled in here: their bill and metrics states get the snapshot
the folds now take at RunForked (each agent's tokens up to there, from the copied prefix read
again and billed), their columns are set from those states, and the rollup is summed anew.
`manage.py rebuild_projections` gives the same.
"""

import json
from typing import Any

from django.db import migrations, models


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import metrics_days
    from journal_store.journal import DjangoJournal
    from journal_store.run_columns import FOLDS, columns_of
    from runtime.bill import Bill
    from runtime.flight import run_records
    from runtime.metrics import DISCARD

    alias = schema_editor.connection.alias
    runs = apps.get_model("journal_store", "RunSummary").objects.using(alias)
    states = apps.get_model("journal_store", "RunState").objects.using(alias)
    journal = DjangoJournal(alias)
    for run_id in runs.exclude(parent_id="").values_list("run_id", flat=True).iterator():
        records = run_records(journal, run_id)
        forked = [i for i, r in enumerate(records) if r.event.kind == "RunForked"]
        if not forked:
            continue
        bill = Bill()
        prefix = bill.start()
        for rec in records[: forked[-1]]:  # the last: a fork of a fork copied its parent's
            if rec.event.kind == "ModelResponded":
                bill.step(prefix, rec, DISCARD)
        rows = prefix["agents"]
        snapshots = {"bill": rows, "metrics": {name: row[0] for name, row in rows.items()}}
        changed: dict[str, Any] = {}
        for name, snapshot in snapshots.items():
            for stored in states.filter(run_id=run_id, fold=name):
                state = json.loads(stored.state)
                state["inherited"] = snapshot
                stored.state = json.dumps(state, separators=(",", ":"))
                stored.save(update_fields=["state"])
                changed.update(columns_of(FOLDS[name], state))
        inherited = {k: v for k, v in changed.items() if k.startswith("inherited_")}
        runs.filter(run_id=run_id).update(**inherited)
    rollup = apps.get_model("journal_store", "MetricsDay").objects.using(alias)
    metrics_days.refill(runs, rollup)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0017_run_baseline_of"),
    ]

    operations = [
        migrations.AddField(
            model_name="runsummary",
            name="inherited_coord_tokens",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="runsummary",
            name="inherited_cost",
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name="runsummary",
            name="inherited_tokens",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="runsummary",
            name="inherited_work_tokens",
            field=models.BigIntegerField(default=0),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
