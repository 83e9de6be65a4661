"""python manage.py diff A B [--json]: compare two runs, each a stored run's id or a journal file.

The command line's `python -m runtime diff` reads journal files only (the runtime knows no
database); this one also reads runs from the store, whole (no page limit), so a stored run can be
compared with another, or with a journal on disk, without exporting it first.

Exit status, as `python -m runtime diff`: 0 when the runs took the same steps, 1 when they
differ, 2 when A or B is refused (neither a journal file nor a stored run, a file that cannot
be read or is no journal): a script tells "they differ" from "it could not compare".
"""

from __future__ import annotations

import json
import os
import sys
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from config.commandline import refused, said, unusable
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime import compare, flight
from runtime.journal import JournalError, Recorded
from runtime.jsonl import JournalCorrupt, JsonlJournal

EXIT_DIFFERS = 1  # as `python -m runtime diff`: 0 when the runs took the same steps, 2 refused


def side(name: str, run: str | None, option: str) -> tuple[str, list[Recorded]]:
    """The run `name` names: a journal file (its one run, or `run`, given as `option`) or a
    stored run's id."""
    path = Path(name)
    if path.is_file() and os.sep not in name and StoredEvent.objects.filter(run_id=name).exists():
        # Both a file here and a stored run: the file was read, in silence.
        raise refused(
            f"{name} is both a file in this folder and a run in the journal store: name the "
            f"file as ./{name}, or run the command from another folder for the stored run"
        )
    if path.is_file():
        try:
            journal = JsonlJournal(path)
            run_id = flight.find_run(journal, journal.streams(), run, option)
            records = flight.figured_records(journal, run_id)
        except flight.FlightError as exc:
            raise refused(f"{name}: {exc}") from None
        except (JournalCorrupt, JournalError) as exc:  # they name the file and the line
            raise refused(str(exc)) from None
        except OSError as exc:  # unreadable
            raise unusable(name, exc) from None
        return f"{name} ({run_id})", records
    if run:
        raise refused(f"{option} names a run inside a journal file; there is no file {name}")
    if not StoredEvent.objects.filter(run_id=name).exists():
        raise refused(f"{name}: neither a journal file nor a run in the journal store")
    return name, DjangoJournal().read_run(name)  # every event of the run, as projected


class Command(BaseCommand):
    help = (
        "Compare two runs, each a stored run's id or a journal file: outcome, bill, calls, "
        "findings, metrics and where they first part. Exits 0 when they took the same "
        "steps, 1 when they differ, 2 when A or B is neither a journal file nor a stored run "
        "(or cannot be read)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("a", help="a stored run's id, or a journal file")
        parser.add_argument("b", help="a stored run's id, or a journal file")
        parser.add_argument("--run-a", help="which run of A, when A is a file holding several")
        parser.add_argument("--run-b", help="which run of B, when B is a file holding several")
        parser.add_argument("--json", action="store_true", help="print the comparison as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        a_name, a = side(options["a"], options["run_a"], "--run-a")
        b_name, b = side(options["b"], options["run_b"], "--run-b")
        result = compare.compare(a, b, a_name, b_name)
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), indent=2, default=str))
        else:
            self.stdout.write(said(compare.text(result)))  # names from a file elsewhere
        if not result.identical:
            sys.exit(EXIT_DIFFERS)
