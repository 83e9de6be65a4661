"""interrupt_run and resume_run: one command, told which way to steer (dashboard/actions.py)."""

from __future__ import annotations

import getpass
from argparse import ArgumentParser
from typing import Any, ClassVar

from django.core.management.base import BaseCommand

from config.commandline import person, said
from dashboard import actions
from dashboard.errors import for_command
from services import runs


class SteerCommand(BaseCommand):
    """Steer the run named on the command line; `action` is a key of actions.STEERING."""

    action: ClassVar[str]

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("run")
        parser.add_argument("--reason", default="")
        parser.add_argument("--by", type=person, default=getpass.getuser())

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            done = actions.steer(options["run"], self.action, options["by"], options["reason"])
        except runs.RunError as exc:
            raise for_command(exc) from None
        self.stdout.write(said(done))
