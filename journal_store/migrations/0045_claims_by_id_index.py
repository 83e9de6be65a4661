"""An index of the claims (ClaimAsserted) by stream and claim id: whether a claim under an id
was asserted on a subject before (its run, agent, value and version asserting it again:
runtime/coordination/noted.py) is one seek, where it read every claim the run made on the
subject, which a run superseding its claim again and again grows without bound.

The id is in the row's payload (`data`, JSON text), so the index is on an expression of it,
which each database spells its own way (JournalStore.claims_named uses the same); it is not
in the model's Meta, which has no portable spelling of it. Partial (only those rows), so no
other append pays for it."""

from django.db import migrations

from journal_store.index_build import BuildIndexFromSQL

NAME = "journal_claims_by_id"
EXPRESSION = {
    "sqlite": "json_extract(data, '$.claim_id')",
    "postgresql": "((data::jsonb) ->> 'claim_id')",
}


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL, where writers would wait out a plain build
    # (journal_store/index_build.py); a concurrent build cannot run in a transaction. Another
    # database reads the run's claims as before, with no index.
    atomic = False

    dependencies = [
        ("journal_store", "0044_claims_noted_index"),
    ]

    operations = [
        BuildIndexFromSQL(
            NAME,
            "journal_event",
            {
                vendor: f"(stream, {expression}) WHERE kind = 'ClaimAsserted'"
                for vendor, expression in EXPRESSION.items()
            },
        )
    ]
