"""What the beat's rounds (tasks.runs.reconcile, tasks.effects.reconcile_effects) do when the
database does not answer.

A round of the beat (the reconciler every 15 s, the effects' every 60 s) that finds the
database gone raised, and Celery logged thirty lines of traceback for it every round for as
long as the database was down: the one fact that mattered buried, and a log that grew by
pages a minute. The round is skipped in one line instead, and the next round tries again; it
is a later round's job anyway, so nothing is lost by missing one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from config.commandline import first_line
from services.steps import TRANSIENT

log = logging.getLogger(__name__)

T = TypeVar("T")


def round_of(what: str, work: Callable[[], list[T]]) -> list[T]:
    """`work()`, or nothing done (an empty list) and one line logged when the database is
    out of reach."""
    try:
        return work()
    except TRANSIENT as exc:
        said = first_line(exc)
        log.warning("%s skipped this round: the database does not answer (%s)", what, said)
        return []
