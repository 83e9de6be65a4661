"""livelock_rate counts a task once (runtime.coordination.livelock.things): a task the
livelock signal found reopened was counted twice, as the task it is and as its signal, in the
part and in the whole (a reviewed task reopened: 1 of 3 where it is 1 of 2). The rate is taken
from each run's stored metrics state, so the runs projected before it get their columns set
again here, a fork's copied prefix folded again, and the rollup summed anew
(journal_store/refill.py). `manage.py rebuild_projections` gives the same.
"""

from typing import Any

from django.db import migrations

FILLED = ("livelocked_tasks", "looked_at_tasks", "copied_figures", "lineage")


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import refill

    refill.metrics(apps, schema_editor.connection.alias, FILLED)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0026_conflicts_parked_in_the_audit"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
