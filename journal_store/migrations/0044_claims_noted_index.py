"""An index of the notes of a fact's live claims alone (LiveClaimsNoted), by stream and
position: the reconciler reads the subject's last note and what came after it, not the whole
claims stream. Partial (only those rows), so no other append pays for it."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL, where writers would wait out a plain build
    # (journal_store/index_build.py); a concurrent build cannot run in a transaction.
    atomic = False

    dependencies = [
        ("journal_store", "0043_search_folded"),
    ]

    operations = [
        BuildIndex(
            model_name="storedevent",
            index=models.Index(
                condition=models.Q(kind="LiveClaimsNoted"),
                fields=["stream", "position"],
                name="journal_claims_noted",
            ),
        ),
    ]
