"""The runs list's newest-first order puts runs with no start time last (dashboard/queries.py
SORTS). On PostgreSQL a descending index keeps NULLs first, so it is made again in the list's
order to keep serving it; SQLite's descending order already has NULLs last."""

from typing import Any

from django.db import migrations


def index(nulls: str) -> Any:
    def make(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        schema_editor.execute("DROP INDEX IF EXISTS run_started_desc")
        schema_editor.execute(
            f"CREATE INDEX run_started_desc ON projection_run (started_at DESC NULLS {nulls})"
        )

    return make


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0015_search_only_runs"),
    ]

    operations = [migrations.RunPython(index("LAST"), index("FIRST"))]
