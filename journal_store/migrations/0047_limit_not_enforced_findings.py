"""A finding read from events every store already holds: `limit_not_enforced` (a run_tests
answer whose result says a limit of the sandbox was not enforced, `not_enforced`). The runs
projected before it get it here, for the events the runs projector has applied (what it applies
later it folds itself): each affected run's fold state, its finding rows and its findings
count, as the projector would have written them. Only the runs with such an answer are read (a
ToolReturned whose JSON holds `"not_enforced"`). `manage.py rebuild_projections` gives the same.
"""

from typing import Any

from django.db import migrations


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import refill
    from runtime.signatures.limits import LimitNotEnforced

    refill.findings(
        apps,
        schema_editor.connection.alias,
        (LimitNotEnforced(),),
        ("ToolReturned",),
        holding='"not_enforced"',
    )


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0046_run_started_by_status"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
