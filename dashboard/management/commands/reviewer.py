"""python manage.py reviewer USER [--revoke]: let a person decide on review items, or stop."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand

from config.commandline import refused


class Command(BaseCommand):
    help = (
        "Give a user the reviewer permission (dashboard.decide): retry or discard dead letters "
        "and resolve claim conflicts, on the pages and through the API. --revoke takes it away."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("user")
        parser.add_argument("--revoke", action="store_true", help="take the permission away")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["user"]
        try:
            user = get_user_model().objects.get(username=name)
        except get_user_model().DoesNotExist:
            raise refused(f"no user {name!r}") from None
        decide = Permission.objects.get(content_type__app_label="dashboard", codename="decide")
        if options["revoke"]:
            user.user_permissions.remove(decide)
            said = f"{name} may no longer decide on review items"
            if user.is_superuser:
                said += " (but is a superuser, who may do everything)"
        else:
            user.user_permissions.add(decide)
            said = f"{name} may now decide on review items"
        self.stdout.write(said)
