"""Two corrections to the figures the metrics page sums (docs/metrics.md).

`livelock_rate` across runs divided the livelocked tasks by the tasks reviewed, which need not
hold them (a desk's flip-flop livelocks with nothing reviewed: 1 of 0, and the totals took it
as 1 of whatever other teams reviewed). Its whole is now the tasks looked at, the reviewed and
every one that livelocked, as each run's own rate had it: `looked_at_tasks`.

A run whose verdict was "done" but whose saga steps were undone (listed "undone
(compensated)") counted as a verified success; it no longer does (`verified`).

The runs already projected are filled in here, for the events the projector has applied: each
metrics state learns whether a saga undid its work from the run's summary state (which has
kept it), and its columns are set from it; a fork's copied prefix is folded again up to its
last RunForked, so that what it copied includes the new sum too; the rollup is summed anew.
`manage.py rebuild_projections` gives the same.
"""

import json
from typing import Any

from django.db import migrations, models

FILLED = ("looked_at_tasks", "verified", "copied_figures", "lineage")


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import metrics_days
    from journal_store.journal import DjangoJournal
    from journal_store.run_columns import FOLDS, columns_of
    from runtime.flight import run_records
    from runtime.metrics import DISCARD

    alias = schema_editor.connection.alias
    runs = apps.get_model("journal_store", "RunSummary").objects.using(alias)
    states = apps.get_model("journal_store", "RunState").objects.using(alias)
    journal = DjangoJournal(alias)
    fold = FOLDS["metrics"]
    forks = set(runs.exclude(parent_id="").values_list("run_id", flat=True))
    summaries = states.filter(fold="summary").values_list("run_id", "state")
    undone = {
        run_id
        for run_id, text in summaries.iterator(chunk_size=2_000)
        if json.loads(text).get("undone")
    }

    def copied(run_id: str, state: dict[str, Any]) -> None:
        """A fork's copied prefix folded again, up to its last RunForked (which snapshots)."""
        records = run_records(journal, run_id)
        forked = [i for i, r in enumerate(records) if r.event.kind == "RunForked"]
        if not forked:
            return
        prefix = fold.start()
        for rec in records[: forked[-1] + 1]:
            if fold.kinds is None or rec.event.kind in fold.kinds:
                fold.step(prefix, rec, DISCARD)
        state["copied"], state["forks"] = prefix["copied"], prefix["forks"]

    # The ids first: SQLite does not keep a table's iteration apart from writes to that table.
    ids = list(states.filter(fold="metrics").values_list("pk", flat=True))
    for at in range(0, len(ids), 2_000):
        for stored in states.filter(pk__in=ids[at : at + 2_000]):
            state = json.loads(stored.state)
            state["undone"] = stored.run_id in undone
            if stored.run_id in forks and "copied" in state:  # projected past its RunForked
                copied(stored.run_id, state)
            stored.state = json.dumps(state, separators=(",", ":"))
            stored.save(update_fields=["state"])
            columns = columns_of(fold, state)
            runs.filter(run_id=stored.run_id).update(**{name: columns[name] for name in FILLED})
    rollup = apps.get_model("journal_store", "MetricsDay").objects.using(alias)
    metrics_days.refill(runs, rollup)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0024_stopped_agent_findings"),
    ]

    operations = [
        migrations.AddField(
            model_name="metricsday",
            name="looked_at_tasks",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="runsummary",
            name="looked_at_tasks",
            field=models.IntegerField(default=0),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
