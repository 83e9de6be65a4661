"""A finding read from events every store already holds: `accepted_failing_tests` (a reviewer's
ACCEPT whose attached test evidence shows failures; in a journal from before the merge gate
read the tests, merged all the same). The runs projected before it get it here, for the events
the runs projector has applied (what it applies later it folds itself): each affected run's
fold state, its finding rows and its findings count, as the projector would have written them.
Only the runs with an ACCEPT are read (a MessageSent whose JSON holds `"accept"`, whatever its
spacing). `manage.py rebuild_projections` gives the same.
"""

from typing import Any

from django.db import migrations


def fill(apps: Any, schema_editor: Any) -> None:
    from journal_store import refill
    from runtime.signatures.agents import AcceptedFailingTests

    refill.findings(
        apps,
        schema_editor.connection.alias,
        (AcceptedFailingTests(),),
        ("MessageSent",),
        holding='"accept"',
    )


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0029_suite_not_run_findings"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
