"""python manage.py resume_run RUN"""

from __future__ import annotations

import getpass
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from tasks import runs


class Command(BaseCommand):
    help = "Resume an interrupted run from its journal."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("run")
        parser.add_argument("--reason", default="")
        parser.add_argument("--by", default=getpass.getuser())

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            runs.resume(options["run"], options["by"], options["reason"])
        except runs.RunError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{options['run']} resumes")
