"""A finding read from events every store already holds: `suite_not_run` (SuiteChecked that
ran no test and says why). The runs projected before it get it here, for the events the runs
projector has applied (what it applies later it folds itself): each affected run's fold
state, its finding rows and its findings count, as the projector would have written them.
`manage.py rebuild_projections` gives the same.
"""

from typing import Any

from django.db import migrations
from django.db.models import F


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store.fold_rows import finding_columns
    from journal_store.journal import DjangoJournal
    from journal_store.projection import compact
    from runtime.flight import run_records
    from runtime.folds import Rows, feed
    from runtime.signatures.suite import SuiteNotRun

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
    checked = events.filter(kind="SuiteChecked", position__lte=applied)
    journal = DjangoJournal(alias)
    fold = SuiteNotRun()
    for run_id in sorted(set(checked.values_list("run_id", flat=True))):
        mine = {"run_id": run_id, "fold": fold.name}
        if states.filter(**mine).exists() or findings.filter(run_id=run_id, kind=fold.name):
            continue  # folded by the projector already
        records = [r for r in run_records(journal, run_id) if r.position <= applied]
        state, rows = fold.start(), Rows()
        feed(fold, state, records, rows)
        if compact(state) != compact(fold.start()):
            states.create(run_id=run_id, fold=fold.name, state=compact(state))
        for key, row in rows.rows.items():
            findings.create(run_id=run_id, **finding_columns(fold.name, key, row))
        if rows.rows:
            runs.filter(run_id=run_id).update(findings_count=F("findings_count") + len(rows.rows))


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0028_a_saga_failed_at_its_first_step"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
