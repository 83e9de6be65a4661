"""A saga whose first step failed undid nothing, and its run was listed "done" and counted a
verified success, though no money moved. It is now `compensated` like a saga that undid the
steps before the one that failed (runtime.events.SagaSettled.undone). The runs projected
before it get it here, for the SagaSettled events the runs projector has applied (what it
applies later it folds itself): each such run's summary and metrics states learn it, its
status and verified columns are set again, a fork's copied prefix is folded again, and the
rollup is summed anew (journal_store/refill.py). `manage.py rebuild_projections`
gives the same.
"""

import json
from typing import Any

from django.db import migrations

FILLED = ("verified", "copied_figures", "lineage")


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import refill
    from journal_store.run_columns import FOLDS, columns_of

    alias = schema_editor.connection.alias
    model = apps.get_model
    applied = refill.applied(apps, alias)
    if not applied:
        return
    settled = (
        model("journal_store", "StoredEvent")
        .objects.using(alias)
        .filter(kind="SagaSettled", position__lte=applied)
        .values_list("run_id", "stream", "data")
    )
    failed_first = set()
    for run_id, stream, data in settled.iterator(chunk_size=2_000):
        saga = json.loads(data)
        # As the summary reads it: the run's own streams only; one that undid steps had it.
        own = stream.startswith(("run-", "worker-"))
        if own and saga.get("failed_step") and not saga.get("compensated"):
            failed_first.add(run_id)
    if not failed_first:
        return
    runs = model("journal_store", "RunSummary").objects.using(alias)
    states = model("journal_store", "RunState").objects.using(alias)
    for stored in states.filter(fold="summary", run_id__in=failed_first):
        state = json.loads(stored.state)
        state["undone"] = True
        stored.state = json.dumps(state, separators=(",", ":"))
        stored.save(update_fields=["state"])
        status = columns_of(FOLDS["summary"], state)["status"]
        runs.filter(run_id=stored.run_id).update(status=status)

    def mend(run_id: str, state: dict[str, Any]) -> None:
        if run_id in failed_first:
            state["undone"] = True

    refill.metrics(apps, alias, FILLED, mend)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0027_a_reopened_task_counted_once"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
