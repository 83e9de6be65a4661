"""Two findings read from events every store already holds: `turn_cap_reached` (TurnCapReached)
and `no_tool_call` (RunInconclusive). The runs projected before them get them here, for the
events the runs projector has applied (what it applies later it folds itself): each affected
run's two fold states, its finding rows and its findings count, as the projector would have
written them. `manage.py rebuild_projections` gives the same.
"""

from typing import Any

from django.db import migrations
from django.db.models import F

STOPS = ("TurnCapReached", "RunInconclusive")


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store.fold_rows import finding_columns
    from journal_store.journal import DjangoJournal
    from journal_store.projection import compact
    from runtime.flight import run_records
    from runtime.folds import Rows, feed
    from runtime.signatures.agents import NoToolCalls, TurnCaps

    alias = schema_editor.connection.alias
    model = apps.get_model
    applied = (
        model("journal_store", "Checkpoint")
        .objects.using(alias)
        .filter(name="runs")
        .values_list("position", flat=True)
        .first()
    )
    if not applied:
        return
    events = model("journal_store", "StoredEvent").objects.using(alias)
    states = model("journal_store", "RunState").objects.using(alias)
    findings = model("journal_store", "Finding").objects.using(alias)
    runs = model("journal_store", "RunSummary").objects.using(alias)
    affected = (
        events.filter(kind__in=STOPS, position__lte=applied)
        .values_list("run_id", flat=True)
        .distinct()
    )
    journal = DjangoJournal(alias)
    for run_id in sorted(set(affected)):
        records = [r for r in run_records(journal, run_id) if r.position <= applied]
        added = 0
        for fold in (TurnCaps(), NoToolCalls()):
            mine = {"run_id": run_id, "fold": fold.name}
            if states.filter(**mine).exists() or findings.filter(run_id=run_id, kind=fold.name):
                continue  # folded by the projector already
            state, rows = fold.start(), Rows()
            feed(fold, state, records, rows)
            if compact(state) != compact(fold.start()):
                states.create(run_id=run_id, fold=fold.name, state=compact(state))
            for key, row in rows.rows.items():
                findings.create(run_id=run_id, **finding_columns(fold.name, key, row))
                added += 1
        if added:
            runs.filter(run_id=run_id).update(findings_count=F("findings_count") + added)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0023_shared_cache"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
