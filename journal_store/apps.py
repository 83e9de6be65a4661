from django.apps import AppConfig


class JournalStoreConfig(AppConfig):
    name = "journal_store"
    verbose_name = "Journal store"
    default_auto_field = "django.db.models.BigAutoField"
