"""API tokens keep a digest of their person's password hash (dashboard/passwords.py)."""

import hashlib
from typing import Any

from django.db import migrations, models


def marked(apps: Any, schema_editor: Any) -> None:
    """Tokens made before password marks were kept are marked with their person's password
    hash as it is now: they go on working until it changes, where a blank mark would have
    revoked every one of them, saying the password had changed."""
    ApiToken = apps.get_model("dashboard", "ApiToken")
    alias = schema_editor.connection.alias  # the database migrated, not always the default
    for token in ApiToken.objects.using(alias).filter(password_mark="").select_related("user"):
        # ApiToken.mark as it is at this migration, kept here as the migration's own.
        token.password_mark = hashlib.sha256(token.user.password.encode()).hexdigest()
        token.save(update_fields=["password_mark"], using=alias)


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0002_api_token_expiry_and_read_only"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="password_mark",
            field=models.CharField(default="", max_length=64),
        ),
        migrations.RunPython(marked, migrations.RunPython.noop),
    ]
