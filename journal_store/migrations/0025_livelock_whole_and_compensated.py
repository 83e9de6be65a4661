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
    from journal_store import refill

    alias = schema_editor.connection.alias
    states = apps.get_model("journal_store", "RunState").objects.using(alias)
    summaries = states.filter(fold="summary").values_list("run_id", "state")
    undone = {
        run_id
        for run_id, text in summaries.iterator(chunk_size=2_000)
        if json.loads(text).get("undone")
    }

    def mend(run_id: str, state: dict[str, Any]) -> None:
        state["undone"] = run_id in undone

    refill.metrics(apps, alias, FILLED, mend)


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
