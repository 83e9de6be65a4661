from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "Minutes dashboard"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A new hash of the same password at sign-in leaves the person's tokens working.
        from dashboard import passwords

        passwords.connect()
