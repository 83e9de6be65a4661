from __future__ import annotations

from django.apps import AppConfig


class DeskConfig(AppConfig):
    name = "desk"
    verbose_name = "Support desk"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The review service commits decisions on order conflicts through the desk's own
        # function: it knows no orders itself.
        from desk import conflicts
        from services.review import register_commit_target

        register_commit_target(
            conflicts.KIND,
            conflicts.commit_status,
            conflicts.current_status,
            name="order",
            currents=conflicts.current_statuses,
        )
