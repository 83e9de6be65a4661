"""python manage.py interrupt_run RUN [--reason WHY]"""

from __future__ import annotations

import getpass
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from tasks import runs


class Command(BaseCommand):
    help = "Stop a run at its next turn boundary (resume it with resume_run)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("run")
        parser.add_argument("--reason", default="")
        parser.add_argument("--by", default=getpass.getuser())

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            runs.interrupt(options["run"], options["by"], options["reason"])
        except runs.RunError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{options['run']} will stop at its next turn boundary")
