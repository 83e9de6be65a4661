"""When each run's oldest conflict or dead letter still waiting for a person was opened
(`waiting_since`), so that the metrics' oldest open item of the runs a date filter chose finds
the runs whose items opened before they started (a journal whose times run backwards: an
imported one, clocks that disagree) by an index (0055), where it walked every open item
opened before the filter's first day (services/metrics.py oldest_open).

The runs already projected are filled in from their stored metrics state (the conflicts and
letters it keeps open, each with its event's time): only those whose summary counts one open.
`manage.py rebuild_projections` gives the same. Run again, it writes the same."""

import json
from datetime import UTC, datetime
from typing import Any

from django.db import migrations, models
from django.db.models import Q

LATEST_T = 32503680000.0  # 3000-01-01, runtime/events/times.py's as 0054 was written


def fill(apps: Any, schema_editor: Any) -> None:
    alias = schema_editor.connection.alias
    runs = apps.get_model("journal_store", "RunSummary").objects.using(alias)
    states = apps.get_model("journal_store", "RunState").objects.using(alias)
    waiting = runs.filter(Q(conflicts_open__gt=0) | Q(letters_open__gt=0))
    chosen = states.filter(fold="metrics", run_id__in=waiting.values("run_id"))
    for run_id, text in chosen.values_list("run_id", "state").iterator(chunk_size=2_000):
        state = json.loads(text)
        # Frozen copy of run_columns.waiting_since as 0054 was written (and of instants.moment:
        # a time stored before times were bounded is brought within them, not raised on).
        opened = [*(state.get("parked") or {}).values(), *(state.get("letters") or {}).values()]
        if opened:
            since = min(moment(t) for t in opened)
            runs.filter(run_id=run_id).update(waiting_since=since)


def moment(t: float) -> datetime:
    try:
        t = float(t)
    except (OverflowError, TypeError, ValueError):
        t = 0.0
    if not 0 <= t < LATEST_T:
        t = LATEST_T - 1 if t >= LATEST_T else 0.0  # NaN compares False: the start
    return datetime.fromtimestamp(t, UTC)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0053_runs_filtered_newest_first"),
    ]

    operations = [
        migrations.AddField(
            model_name="runsummary",
            name="waiting_since",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
