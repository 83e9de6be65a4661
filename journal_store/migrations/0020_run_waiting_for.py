"""What a run waits for a person to decide (`waiting_for`), beside its stage, which now reads
"waiting" while a dead letter or an escalated run's conflict is open: a run parked on a
conflict said "complete", and one with a dead letter the stage its work had reached.

The runs projected before with an undecided item (the dead-lettered and waiting ones) have
their resume point folded again from their events, every stream of theirs, as the projector
reads them; any other run's stored state reads as before. `manage.py rebuild_projections`
gives the same.
"""

import json
from typing import Any

from django.db import migrations, models
from django.db.models import Q


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store.journal import DjangoJournal
    from journal_store.run_columns import FOLDS, columns_of
    from runtime.metrics import DISCARD

    alias = schema_editor.connection.alias
    runs = apps.get_model("journal_store", "RunSummary").objects.using(alias)
    states = apps.get_model("journal_store", "RunState").objects.using(alias)
    journal = DjangoJournal(alias)
    fold = FOLDS["resume_point"]
    undecided = Q(status__in=("waiting", "dead-lettered")) | Q(letters_open__gt=0)
    undecided |= Q(conflicts_open__gt=0)
    for run_id in runs.filter(undecided).values_list("run_id", flat=True).iterator():
        state = fold.start()
        for rec in journal.read_run(run_id):
            fold.step(state, rec, DISCARD)
        text = json.dumps(state, separators=(",", ":"))
        states.update_or_create(run_id=run_id, fold=fold.name, defaults={"state": text})
        runs.filter(run_id=run_id).update(**columns_of(fold, state))


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0019_letters_open"),
    ]

    operations = [
        migrations.AddField(
            model_name="runsummary",
            name="waiting_for",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
