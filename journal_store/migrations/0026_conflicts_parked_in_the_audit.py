"""The audit trail names each conflict parked for a person (runtime/audit.py): it held
the person's ruling (ConflictResolved) and not what was put before them, nor when. The runs
projected before it get the entries here, for the ConflictParked events the runs projector has
applied (what it applies later it folds itself), as the projector would have written them.
`manage.py rebuild_projections` gives the same.
"""

from typing import Any

from django.db import migrations


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import refill
    from journal_store.fold_rows import audit_columns
    from journal_store.journal import DjangoJournal
    from runtime.audit import Audit
    from runtime.folds import Rows

    alias = schema_editor.connection.alias
    model = apps.get_model
    applied = refill.applied(apps, alias)
    if not applied:
        return
    events = model("journal_store", "StoredEvent").objects.using(alias)
    entries = model("journal_store", "AuditEntry").objects.using(alias)
    journal = DjangoJournal(alias)
    parked = events.filter(kind="ConflictParked", position__lte=applied)
    fold = Audit()
    for stream, position in parked.values_list("stream", "position").order_by("position"):
        [rec] = [r for r in journal.read(stream) if r.position == position]
        if entries.filter(run_id=rec.event.run_id, position=position).exists():
            continue  # folded by the projector already
        rows = Rows()
        fold.step(fold.start(), rec, rows)
        for key, row in rows.rows.items():
            entries.create(run_id=rec.event.run_id, **audit_columns(fold.name, key, row))


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0025_livelock_whole_and_compensated"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
