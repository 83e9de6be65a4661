"""python manage.py backup FILE [--database ALIAS] [--force]"""

from __future__ import annotations

import time
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.template.defaultfilters import pluralize

from config.commandline import refused, said, unusable
from journal_store import backup


class Command(BaseCommand):
    help = (
        "Back up the whole store (the journal, read models, people, tokens, decisions) into "
        "FILE as it stood at one moment, while Minutes runs: a SQLite file, or pg_dump's "
        "custom format for PostgreSQL. Restoring: docs/journal.md, Backups."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file")
        parser.add_argument(
            "--database", default="default", help="the database to back up (default: default)"
        )
        parser.add_argument(
            "--force", action="store_true", help="replace FILE when it exists (another backup)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        alias, path = options["database"], Path(options["file"])
        if alias not in settings.DATABASES:
            known = ", ".join(settings.DATABASES)
            raise refused(
                f"--database {alias!r}: no such database in the settings (they name {known})"
            )
        began = time.monotonic()
        try:
            written = backup.back_up(alias, path, options["force"])
        except backup.Refused as exc:
            raise refused(str(exc)) from None
        except backup.Failed as exc:
            raise CommandError(said(f"{exc}; nothing was written to {path}")) from None
        except OSError as exc:  # no permission, a full disk: named, not a traceback
            raise unusable(path, exc) from None
        self.stderr.write(
            f"{path}: {size_of(written.size)}, {written.events:,} "
            f"event{pluralize(written.events)} of {written.runs:,} run{pluralize(written.runs)} "
            f"({written.counted}), written in {time.monotonic() - began:.1f} s"
        )


def size_of(count: int) -> str:
    """A file's size as a person reads it: 812 bytes, 4.1 MB, 2.3 GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"
