"""python manage.py api_token USER [--name NAME]: a bearer token for scripts (shown once)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from dashboard.models import ApiToken


class Command(BaseCommand):
    help = "Make an API token for a user; it is printed once and stored only as a hash."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("user")
        parser.add_argument("--name", default="script")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user = get_user_model().objects.get(username=options["user"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user {options['user']!r}") from None
        _, token = ApiToken.issue(user, options["name"])
        self.stdout.write(token)
