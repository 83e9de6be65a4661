"""An index of the decisions on claims alone, by stream and position: a conflict card reads the
decisions on its subject's claims since it was parked, not the subject's whole claims stream.
Partial (only ClaimsReconciled rows), so no other append pays for it."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0030_accepted_failing_tests_findings"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="storedevent",
            index=models.Index(
                condition=models.Q(kind="ClaimsReconciled"),
                fields=["stream", "position"],
                name="journal_claims_decided",
            ),
        ),
    ]
