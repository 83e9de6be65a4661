"""python manage.py supersede_intent INTENT --statement WHAT --reason WHY [--based-on N]"""

from __future__ import annotations

import getpass
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from config.commandline import person
from dashboard.errors import for_command
from services import intents


class Command(BaseCommand):
    help = (
        "Supersede an intent with a new version: runs that hold an older version are refused "
        "at their next change (MutationRefused in their journal)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("intent", help="the intent id, e.g. ticket-o-4471")
        parser.add_argument("--statement", required=True, help="what is wanted now")
        parser.add_argument("--reason", required=True, help="why it changed")
        parser.add_argument(
            "--based-on", type=int, help="the version you read: refused if it has moved since"
        )
        parser.add_argument("--by", type=person, default=getpass.getuser())

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            intent = intents.supersede(
                options["intent"],
                options["statement"],
                options["by"],
                options["reason"],
                options["based_on"],
            )
        except intents.IntentError as exc:
            raise for_command(exc) from None
        self.stdout.write(f"{intent.intent_id} is now at version {intent.version}")
