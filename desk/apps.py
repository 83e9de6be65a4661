from django.apps import AppConfig


class DeskConfig(AppConfig):
    name = "desk"
    verbose_name = "Support desk"
    default_auto_field = "django.db.models.BigAutoField"
