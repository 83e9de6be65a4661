"""An index of the decisions on claims alone, by stream and position: a conflict card reads the
decisions on its subject's claims since it was parked, not the subject's whole claims stream.
Partial (only ClaimsReconciled rows), so no other append pays for it."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL, where writers would wait out a plain build
    # (journal_store/index_build.py); a concurrent build cannot run in a transaction.
    atomic = False

    dependencies = [
        ("journal_store", "0030_accepted_failing_tests_findings"),
    ]

    operations = [
        BuildIndex(
            model_name="storedevent",
            index=models.Index(
                condition=models.Q(kind="ClaimsReconciled"),
                fields=["stream", "position"],
                name="journal_claims_decided",
            ),
        ),
    ]
