"""A run's duration leaves out the time it waited for a person once it went on (RunSummary
.waited, added by 0032). The runs projected before it that went on after such a wait (a
RunResumed, a dead letter retried or discarded, among the events the runs projector has
applied: what it applies later it folds itself) get it here: each one's summary is folded
again from its events, and its state's `waited` and its column are set from that fold, as the
projector would have written them. `manage.py rebuild_projections` gives the same.
"""

import json
from datetime import timedelta
from typing import Any

from django.db import migrations

WENT_ON = ("RunResumed", "DeadLetterRetried", "DeadLetterDiscarded")


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import refill
    from journal_store.journal import DjangoJournal
    from runtime import folds, views

    alias = schema_editor.connection.alias
    applied = refill.applied(apps, alias)
    if not applied:
        return
    model = apps.get_model
    went_on = set(
        model("journal_store", "StoredEvent")
        .objects.using(alias)
        .filter(kind__in=WENT_ON, position__lte=applied)
        .values_list("run_id", flat=True)
        .distinct()
    )
    journal = DjangoJournal(alias)
    runs = model("journal_store", "RunSummary").objects.using(alias)
    states = model("journal_store", "RunState").objects.using(alias)
    for stored in states.filter(fold="summary", run_id__in=went_on - {""}):
        records = [r for r in journal.read_run(stored.run_id) if r.position <= applied]
        waited = folds.run(views.Summary(), records)["waited"]
        state = json.loads(stored.state)
        state["waited"] = waited
        stored.state = json.dumps(state, separators=(",", ":"))
        stored.save(update_fields=["state"])
        runs.filter(run_id=stored.run_id).update(waited=timedelta(seconds=waited))


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0032_run_waited"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
