from __future__ import annotations

from django.apps import AppConfig


class JournalStoreConfig(AppConfig):
    name = "journal_store"
    verbose_name = "Journal store"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from journal_store import anycase, checks  # noqa: F401 (checks registers itself)

        # The searches' match in any case on SQLite (journal_store/anycase.py).
        connection_created.connect(anycase.register, dispatch_uid="minutes-anycase")
