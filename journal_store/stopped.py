"""Runs a projector stopped applying: one run's event must not stop every read model.

A projector applies a batch of the journal's rows in a savepoint (journal_store/projection.py
advance). When the batch raises (a fold's bug meeting an unusual but admitted event, a row
written into the table by a tool), the savepoint is rolled back, so nothing of the batch is
half written, and the event that did it is found: the shortest prefix of the batch that
still raises, by bisection, each try in a savepoint rolled back after; its last row is the
event. Its run is set aside for that projector (a StoppedView row: the event's position and
kind, and the error), the batch is applied again without that run's rows from the event on,
and the catch-up goes on. Later batches skip the run's rows for that projector; the run's
read models stand as they were before the event, and its page says so. A rebuild clears the
rows and folds the runs again (set aside again if they still fail).

An event of no run (a stream that belongs to none: an order's, an intent's) that makes a
projector raise stops it as before, since there is no run to set aside: the catch-up raises.
So does the database's own trouble (OperationalError, InterfaceError: a lock, a lost
connection), which no event caused and which a later catch-up may not meet.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.db import InterfaceError, OperationalError, transaction

from journal_store.journal_rows import Row
from journal_store.models import StoppedView

if TYPE_CHECKING:
    from journal_store.projection import Projector

log = logging.getLogger(__name__)

POSITION, RUN_ID, KIND = 0, 4, 5  # columns of journal_rows.SELECT
# The status of a run the summaries' fold set aside at its first event: nothing of it folded.
UNFOLDED = "unknown"
ERROR_CHARS = 500  # an error's type and message as kept: an agent's output can be long
NOT_AN_EVENTS_FAULT = (OperationalError, InterfaceError)


class Undone(Exception):
    """Raised inside a trial's savepoint to roll it back when the trial went through."""


def stopped(names: Iterable[str], using: str) -> dict[str, dict[str, int]]:
    """The runs each of these projectors set aside: name -> {run id: the event's position}."""
    found: dict[str, dict[str, int]] = {name: {} for name in names}
    rows = StoppedView.objects.using(using).filter(projector__in=list(found))
    for projector, run_id, position in rows.values_list("projector", "run_id", "position"):
        found[projector][run_id] = position
    return found


def forget(names: Iterable[str], using: str) -> None:
    """Clear what these projectors set aside (a rebuild: they apply every run again)."""
    StoppedView.objects.using(using).filter(projector__in=list(names)).delete()


def of_run(run_id: str, using: str = "default") -> list[StoppedView]:
    """Where the run's read models stopped, by projector."""
    return list(StoppedView.objects.using(using).filter(run_id=run_id).order_by("projector"))


def apply(projector: Projector, rows: list[Row], using: str, aside: dict[str, int]) -> None:
    """Apply the rows of the runs not set aside; set aside each run whose event raises.
    `aside` is the projector's runs set aside, updated with those set aside here."""
    if aside:
        rows = [row for row in rows if row[RUN_ID] not in aside]
    culprits: list[Row] = []
    while rows:
        try:
            with transaction.atomic(using=using):
                projector.apply(rows, using)
            break
        except NOT_AN_EVENTS_FAULT:
            raise
        except Exception as exc:
            culprit, error = first_failing(projector, rows, using, exc)
            if culprit is None:
                raise  # the batch went through when tried again: no event of it is to blame
            run_id, position = culprit[RUN_ID], culprit[POSITION]
            if not run_id:
                raise  # an event of no run: there is no run to set aside (see above)
            record(projector.name, culprit, error, using)
            aside[run_id] = position
            culprits.append(culprit)
            rows = [row for row in rows if row[RUN_ID] != run_id or row[POSITION] < position]
    for culprit in culprits:  # once the rest of the batch is applied (its rows before it too)
        projector.set_aside(culprit, using)


def first_failing(
    projector: Projector, rows: list[Row], using: str, error: Exception
) -> tuple[Row | None, Exception]:
    """The row whose prefix of `rows` is the shortest that raises, and what it raised; None
    when the whole batch no longer does. Each trial is rolled back."""
    if (again := trial(projector, rows, using)) is None:
        return None, error
    passes, fails, error = 0, len(rows), again  # rows[:passes] went through; rows[:fails] raised
    while fails - passes > 1:
        middle = (passes + fails) // 2
        raised = trial(projector, rows[:middle], using)
        if raised is None:
            passes = middle
        else:
            fails, error = middle, raised
    return rows[fails - 1], error


def trial(projector: Projector, rows: list[Row], using: str) -> Exception | None:
    """What applying these rows raises (None: nothing), leaving the tables as they were."""
    try:
        with transaction.atomic(using=using):
            projector.apply(rows, using)
            raise Undone
    except Undone:
        return None
    except NOT_AN_EVENTS_FAULT:
        raise
    except Exception as exc:
        return exc


def record(name: str, row: Row, error: Exception, using: str) -> None:
    # PostgreSQL's text holds no NUL, and the message may quote an event's strings.
    said = f"{type(error).__name__}: {error}".replace("\x00", "\ufffd")
    if len(said) > ERROR_CHARS:
        said = said[: ERROR_CHARS - 1] + "…"
    StoppedView.objects.using(using).update_or_create(
        projector=name,
        run_id=row[RUN_ID],
        defaults={"position": row[POSITION], "kind": row[KIND], "error": said},
    )
    # Once: the run's later rows are skipped by this projector, so it raises no more.
    log.error(
        "projector %s stopped applying run %s at position %s (%s): %s",
        name,
        row[RUN_ID],
        row[POSITION],
        row[KIND],
        said,
    )
