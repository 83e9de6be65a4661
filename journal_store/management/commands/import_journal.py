"""python manage.py import_journal FILE [--run-id ID] [--allow-torn] [--by NAME]"""

from __future__ import annotations

import getpass
import os
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from config.commandline import person, refused, unusable
from journal_store import admission, after_import
from journal_store.transfer import ImportRefused, import_journal
from runtime.cli_args import kind_of


class Command(BaseCommand):
    help = "Import a JSONL journal (ours or the reference runtime's flat format) atomically."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--run-id", help="import as this run id (new event ids are derived)")
        parser.add_argument(
            "--allow-torn", action="store_true", help="import the rest when the final line is torn"
        )
        parser.add_argument(
            "--by",
            type=person,
            default=getpass.getuser(),
            help="who imports: the starter of the runs the file introduces (default: you)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        # Named by its flag, before the file is read: the import's refusal named it "the new
        # run id: field 'run_id'", a line's field, after "nothing was imported".
        if options["run_id"] is not None and (why := admission.run_id_refusal(options["run_id"])):
            raise refused(f"--run-id: {why}")
        if os.path.exists(path) and not os.path.isdir(path) and not os.path.isfile(path):
            # A pipe or a device: opened, it waited for a writer for ever.
            raise refused(f"{path} is not a journal file: {kind_of(Path(path))}")
        try:
            size = os.path.getsize(path)
            with open(path, "rb") as source:
                report = import_journal(
                    source,
                    name=path,
                    run_id=options["run_id"],
                    allow_torn=options["allow_torn"],
                    size=size,
                    by=options["by"],
                )
        except FileNotFoundError:
            raise refused(f"no file at {path}") from None
        except OSError as exc:  # a directory, no permission: named, not a traceback
            raise unusable(path, exc) from None
        except ImportRefused as exc:
            raise refused(f"{path}: {exc}") from None
        if report.torn:
            self.stderr.write(f"warning: {path}: {report.torn}; the rest was imported")
        for said in report.left_out_said:
            self.stderr.write(f"{path}: {said}")
        if note := after_import.catch_up():
            self.stderr.write(f"warning: {path}: {note}")
        for run_id in report.run_ids:
            self.stdout.write(run_id)
        if report.added == 0:
            self.stderr.write(f"{path}: every event is in this store already; nothing added")
