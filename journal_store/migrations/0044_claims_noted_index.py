"""An index of the notes of a fact's live claims alone (LiveClaimsNoted), by stream and
position: the reconciler reads the subject's last note and what came after it, not the whole
claims stream. Partial (only those rows), so no other append pays for it."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0043_search_folded"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="storedevent",
            index=models.Index(
                condition=models.Q(kind="LiveClaimsNoted"),
                fields=["stream", "position"],
                name="journal_claims_noted",
            ),
        ),
    ]
