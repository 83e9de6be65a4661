"""Indexes of the gate's refusals and of the claims on a subject, by stream and position: the
same tool call run again looks for what it wrote among the rows after its dispatch
(runtime/coordination/calls.py), where it read the gate's log, or the subject's claims, whole.
Partial (only MutationRefused rows, only ClaimAsserted rows), so no other append pays for them."""

from django.db import migrations, models

from journal_store.index_build import BuildIndex


class Migration(migrations.Migration):
    # Built concurrently on PostgreSQL, where writers would wait out a plain build
    # (journal_store/index_build.py); a concurrent build cannot run in a transaction.
    atomic = False

    dependencies = [
        ("journal_store", "0037_bill_estimated"),
    ]

    operations = [
        BuildIndex(
            model_name="storedevent",
            index=models.Index(
                condition=models.Q(kind="MutationRefused"),
                fields=["stream", "position"],
                name="journal_refusals_since",
            ),
        ),
        BuildIndex(
            model_name="storedevent",
            index=models.Index(
                condition=models.Q(kind="ClaimAsserted"),
                fields=["stream", "position"],
                name="journal_claims_since",
            ),
        ),
    ]
