"""python manage.py rebuild_projections [--only NAME]"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand
from django.db import DatabaseError

from config.commandline import refused, said
from journal_store import projection, queues, substrings
from journal_store.models import Checkpoint, StoredEvent


class Command(BaseCommand):
    help = "Throw the read models away and rebuild them from the journal's first event."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--only",
            action="append",
            choices=sorted(projection.PROJECTORS),
            help="rebuild only this projector (repeatable)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            projectors = projection.named(options["only"])
        except ValueError as exc:
            raise refused(str(exc)) from None
        names = [p.name for p in projectors]
        projection.rebuild(names)
        # The journal's events the rebuild read up to, as many as the journal holds: the sum
        # of what each projector applied counted an event once a projector (348 of 174), and
        # none for one that reads only some kinds.
        top = Checkpoint.objects.filter(name=names[0]).values_list("position", flat=True)[0]
        events = StoredEvent.objects.filter(position__lte=top).count()
        self.stdout.write(f"rebuilt {', '.join(names)} from {events} events")
        # The search copies of the tables written again (their indexes kept both writings).
        written = {m._meta.db_table for p in projectors for m in p.models}
        copies = [s for s in queues.SEARCHED if s.table in written]
        try:
            made = substrings.compact(copies)
        except DatabaseError as exc:
            # The rebuild stands (committed); only its indexes' size is left, which a user
            # that does not own the tables may not mend (REINDEX is the owner's).
            by_hand = "; ".join(f"REINDEX TABLE CONCURRENTLY {s.words}" for s in copies)
            self.stderr.write(
                f"the search indexes were not made again ({said(str(exc).strip())}): searches "
                f"work, somewhat slower, until the tables' owner runs {by_hand}"
            )
            return
        if made:
            self.stdout.write(f"made the search indexes of {', '.join(made)} again")
