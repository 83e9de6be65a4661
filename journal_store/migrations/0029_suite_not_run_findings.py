"""A finding read from events every store already holds: `suite_not_run` (SuiteChecked that
ran no test and says why). The runs projected before it get it here, for the events the runs
projector has applied (what it applies later it folds itself): each affected run's fold
state, its finding rows and its findings count, as the projector would have written them.
`manage.py rebuild_projections` gives the same.
"""

from typing import Any

from django.db import migrations


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import refill
    from runtime.signatures.suite import SuiteNotRun

    refill.findings(apps, schema_editor.connection.alias, (SuiteNotRun(),), ("SuiteChecked",))


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0028_a_saga_failed_at_its_first_step"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
