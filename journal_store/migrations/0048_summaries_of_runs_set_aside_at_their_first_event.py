"""A run the summaries' fold set aside at its first event (journal_store/stopped.py) now gets a
summary of what is known (its id, its start, status unknown: projection.Runs.set_aside), so
the runs list has it. One set aside so before that change has no summary until the next
rebuild_projections: it had a page, but no row in the runs list, so nobody found it.

Each such run (a StoppedView of the runs' projector whose run has no RunSummary) is given its
summary now, through that same set_aside, from the row the fold stopped at: the summary and
the metrics rollup a rebuild would write. A run with a summary is left as it stands (set
aside later in its journal, it keeps the one it had before the event), as is one whose row is
gone from the journal. Run again, it writes nothing."""

from typing import Any

from django.db import migrations, transaction


def summarize(apps: Any, schema_editor: Any) -> None:
    from journal_store.journal import SELECT
    from journal_store.projection import RUN_ID, Runs

    using = schema_editor.connection.alias
    aside = apps.get_model("journal_store", "StoppedView").objects.using(using)
    summaries = apps.get_model("journal_store", "RunSummary").objects.using(using)
    stops = dict(aside.filter(projector=Runs.name).values_list("run_id", "position"))
    if not stops:
        return
    have = set(summaries.filter(run_id__in=list(stops)).values_list("run_id", flat=True))
    runs = Runs()
    for run_id, position in sorted(stops.items()):
        if run_id in have:
            continue
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(f"{SELECT} WHERE position = %s", [position])
            row = cursor.fetchone()
        if row is None or row[RUN_ID] != run_id:
            continue  # gone from the journal: a rebuild has nothing to fold either
        with transaction.atomic(using=using):
            runs.set_aside(row, using)


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0047_limit_not_enforced_findings"),
    ]

    operations = [migrations.RunPython(summarize, migrations.RunPython.noop)]
