"""The coordination metrics count a failed model call's tokens when it was paid for
(ModelFailed.usage: a reply that could not be used, a pick before an outage), as the bill does:
a run's coordination and work tokens left them out, and fell short of its tokens. The runs
projected before it whose journals hold a ModelFailed the runs projector has applied (what it
applies later it folds itself) get their metrics state folded again from their events up to
there, their token columns set again, a fork's copied prefix folded again, and the rollup
summed anew (journal_store/refill.py). `manage.py rebuild_projections` gives the same.
"""

from typing import Any

from django.db import migrations

FILLED = (
    "coord_tokens",
    "work_tokens",
    "inherited_coord_tokens",
    "inherited_work_tokens",
    "overhead_ratio",
    "coord_seconds",
    "work_seconds",
    "copied_figures",
    "lineage",
)


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import refill
    from journal_store.journal import DjangoJournal
    from journal_store.run_columns import FOLDS
    from runtime.folds import feed
    from runtime.metrics import DISCARD

    alias = schema_editor.connection.alias
    applied = refill.applied(apps, alias)
    if not applied:
        return
    failed = set(
        apps.get_model("journal_store", "StoredEvent")
        .objects.using(alias)
        .filter(kind="ModelFailed", position__lte=applied)
        .values_list("run_id", flat=True)
    )
    if not failed:
        return
    journal = DjangoJournal(alias)
    fold = FOLDS["metrics"]

    def mend(run_id: str, state: dict[str, Any]) -> None:
        # Folded again, as the projector folds a run: every event of its id, in position order.
        if run_id in failed:
            again = fold.start()
            records = [r for r in journal.read_run(run_id) if r.position <= applied]
            feed(fold, again, records, DISCARD)
            state.clear()
            state.update(again)

    refill.metrics(apps, alias, FILLED, mend)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0038_calls_since_dispatch"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
