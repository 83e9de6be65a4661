"""An index of the claims (ClaimAsserted) by stream and claim id: whether a claim under an id
was asserted on a subject before (its run, agent, value and version asserting it again:
runtime/coordination/noted.py) is one seek, where it read every claim the run made on the
subject, which a run superseding its claim again and again grows without bound.

The id is in the row's payload (`data`, JSON text), so the index is on an expression of it,
which each database spells its own way (JournalStore.claims_named uses the same); it is not
in the model's Meta, which has no portable spelling of it. Partial (only those rows), so no
other append pays for it."""

from typing import Any

from django.db import migrations

NAME = "journal_claims_by_id"
EXPRESSION = {
    "sqlite": "json_extract(data, '$.claim_id')",
    "postgresql": "((data::jsonb) ->> 'claim_id')",
}


def create(apps: Any, schema_editor: Any) -> None:
    expression = EXPRESSION.get(schema_editor.connection.vendor)
    if expression is None:  # another database reads the run's claims as before
        return
    schema_editor.execute(
        f"CREATE INDEX {NAME} ON journal_event (stream, {expression}) WHERE kind = 'ClaimAsserted'"
    )


def drop(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor in EXPRESSION:
        schema_editor.execute(f"DROP INDEX IF EXISTS {NAME}")


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0044_claims_noted_index"),
    ]

    operations = [migrations.RunPython(create, drop)]
