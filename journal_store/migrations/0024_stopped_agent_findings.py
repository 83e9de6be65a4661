"""Two findings read from events every store already holds: `turn_cap_reached` (TurnCapReached)
and `no_tool_call` (RunInconclusive). The runs projected before them get them here, for the
events the runs projector has applied (what it applies later it folds itself): each affected
run's two fold states, its finding rows and its findings count, as the projector would have
written them. `manage.py rebuild_projections` gives the same.
"""

from typing import Any

from django.db import migrations

STOPS = ("TurnCapReached", "RunInconclusive")


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import refill
    from runtime.signatures.agents import NoToolCalls, TurnCaps

    refill.findings(apps, schema_editor.connection.alias, (TurnCaps(), NoToolCalls()), STOPS)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0023_shared_cache"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
