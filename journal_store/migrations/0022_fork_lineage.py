"""A fork of a fork's summary keeps its chain above its parent (`lineage`, `lineage_cost`): the
earlier RunForked events its journal copied, each with what that fork's copied prefix held, so
the sums across runs count a chain's past once when a run in its middle is not in the store.

The forks already projected are filled in here: their bill and metrics states get the list the
folds now keep at each RunForked (the copied prefix folded again, up to its last RunForked),
and their columns are set from those states. The rollup needs nothing: a run's share does not
read them. `manage.py rebuild_projections` gives the same.
"""

import json
from typing import Any

from django.db import migrations, models


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store.journal import DjangoJournal
    from journal_store.run_columns import lineage, lineage_cost
    from runtime.bill import Bill
    from runtime.flight import run_records
    from runtime.metrics import DISCARD, Metrics

    alias = schema_editor.connection.alias
    runs = apps.get_model("journal_store", "RunSummary").objects.using(alias)
    states = apps.get_model("journal_store", "RunState").objects.using(alias)
    journal = DjangoJournal(alias)
    columns = {"bill": lineage_cost, "metrics": lineage}
    for run_id in runs.exclude(parent_id="").values_list("run_id", flat=True).iterator():
        records = run_records(journal, run_id)
        forked = [i for i, r in enumerate(records) if r.event.kind == "RunForked"]
        if len(forked) < 2:
            continue  # a fork of a run that is no fork: no chain above its parent
        found: dict[str, Any] = {}
        for name, fold in (("bill", Bill()), ("metrics", Metrics())):
            prefix = fold.start()
            for rec in records[: forked[-1] + 1]:  # up to its own RunForked
                if fold.kinds is None or rec.event.kind in fold.kinds:
                    fold.step(prefix, rec, DISCARD)
            for stored in states.filter(run_id=run_id, fold=name):
                state = json.loads(stored.state)
                state["forks"] = prefix["forks"]
                stored.state = json.dumps(state, separators=(",", ":"))
                stored.save(update_fields=["state"])
                found.update(columns[name](state))
        runs.filter(run_id=run_id).update(**found)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0021_fork_copied_figures"),
    ]

    operations = [
        migrations.AddField(
            model_name="runsummary",
            name="lineage",
            field=models.JSONField(default=list),
        ),
        migrations.AddField(
            model_name="runsummary",
            name="lineage_cost",
            field=models.JSONField(default=dict),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
