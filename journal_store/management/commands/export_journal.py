"""python manage.py export_journal RUN [-o FILE]"""

from __future__ import annotations

import sys
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from config.commandline import refused, unusable
from journal_store import backup
from journal_store.models import StoredEvent
from journal_store.transfer import export
from runtime.replaced import holds_a_database, replaced, unwritable


class Command(BaseCommand):
    help = "Export a run's journal as JSONL (to standard output, or to a file with -o)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("run")
        parser.add_argument("-o", "--output", help="write to this file instead of stdout")

    def export_to(self, run_id: str, path: Path) -> int:
        """Write the export beside `path` and move it into place when whole: a failure part
        way leaves the file as it was (no half journal), and no part file behind. A path it
        cannot write is refused first, naming why (a folder, none to write it in, read-only)."""
        # Said before anything is written, in the words `backup` has for them: the write
        # said only "No such file or directory" of a folder that is not there; and a path
        # that is the live database was replaced by the export, the whole store lost.
        if which := backup.on_live(path, backup.live_files()):
            raise refused(f"{path} is {which}: an export written there would destroy the store")
        if holds_a_database(path):  # another store, a backup: as much lost
            raise refused(
                f"{path} is an SQLite database: an export written there would replace it; "
                "name another file"
            )
        if why := unwritable(path, "export"):
            raise refused(why)
        try:
            with replaced(path, "w") as out:
                return export(run_id, out)
        except OSError as exc:
            raise unusable(path, exc) from None

    def handle(self, *args: Any, **options: Any) -> None:
        run_id = options["run"]
        if not StoredEvent.objects.filter(run_id=run_id).exists():
            raise refused(f"no run {run_id!r} in the journal store")
        if options["output"]:
            count = self.export_to(run_id, Path(options["output"]))
            self.stderr.write(f"{count} events written to {options['output']}")
        else:
            try:
                export(run_id, sys.stdout)
            except BrokenPipeError:
                # The reader went away (`| head`): not an error of ours.
                sys.stderr.close()
            except OSError as exc:  # a full disk behind `> file`: said, as -o says it (exit 1)
                raise CommandError(f"standard output: {exc.strerror or exc}") from None
