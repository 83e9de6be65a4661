"""The beat's rounds (tasks.runs.reconcile, tasks.effects.reconcile_effects): what each does
when the database does not answer, and when the last one ended, for the pages to say whether
stalled runs are being queued again at all.

A round of the beat (the reconciler every 15 s, the effects' every 60 s) that finds the
database gone raised, and Celery logged thirty lines of traceback for it every round for as
long as the database was down: the one fact that mattered buried, and a log that grew by
pages a minute. The round is skipped in one line instead, and the next round tries again; it
is a later round's job anyway, so nothing is lost by missing one.

With no beat running anywhere (no worker started with --beat, or it died), or no worker to
take the rounds it sends, a run that stalls is never queued again, and its page only said
"stalled since". Each round that ends records when (BeatRound), and `silence` says, for the
runs list and the API, how long none has while a run is active.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from django.conf import settings
from django.utils import timezone

from config.commandline import first_line
from journal_store.models import BeatRound, RunSummary
from runtime import status
from runtime.signatures.stalls import lasted
from services.steps import TRANSIENT

log = logging.getLogger(__name__)

T = TypeVar("T")
REVIVING = "reviving stalled runs"
SETTLING = "settling effects in flight"
TIDYING = "merging the search indexes"


def round_of(what: str, work: Callable[[], list[T]]) -> list[T]:
    """`work()`, and when it ended recorded under `what`; or nothing done (an empty list) and
    one line logged when the database is out of reach."""
    try:
        done = work()
        BeatRound.objects.update_or_create(what=what, defaults={"at": timezone.now()})
        return done
    except TRANSIENT as exc:
        said = first_line(exc)
        log.warning("%s skipped this round: the database does not answer (%s)", what, said)
        return []


def last_round(what: str = REVIVING) -> datetime | None:
    """When a round of `what` last ended, on any worker; None if none has on this database."""
    return BeatRound.objects.filter(what=what).values_list("at", flat=True).first()


def patience() -> float:
    """How long without a round of the reconciler is taken to mean no beat runs: four of its
    periods, and at least a minute (a round may wait behind steps in the queue)."""
    return max(60.0, 4.0 * settings.RECONCILE_SECONDS)


def silence(now: datetime | None = None) -> str | None:
    """Why a run that stalls now would not be queued again (no round of the reconciler for
    longer than `patience`, or none ever, while a run has been active that long), in a
    sentence for the runs list and the API; None while rounds come, or no run is active."""
    return silence_after(last_round(), now)


def silence_after(last: datetime | None, now: datetime | None = None) -> str | None:
    """`silence`, for a caller that has read the last round already (a stalled run's page,
    which also says when it ended)."""
    now = now or timezone.now()
    wait = patience()
    if last is not None and (now - last).total_seconds() <= wait:
        return None
    oldest = (
        RunSummary.objects.filter(status__in=status.ACTIVE, started_at__isnull=False)
        .order_by("started_at")
        .values_list("started_at", flat=True)
        .first()
    )
    if oldest is None or (now - oldest).total_seconds() <= wait:
        return None
    start = (
        "start a worker with the beat (celery -A config worker --beat), or a beat beside the "
        "workers (celery -A config beat)"
    )
    if last is None:
        return (
            "No beat has queued a stalled run again on this database yet: a run that stalls "
            f"waits until one does; {start}"
        )
    # Said as the run's findings say how long a stall lasted.
    ago = lasted((now - last).total_seconds())
    return (
        f"No beat has queued stalled runs again since {last:%Y-%m-%d %H:%M:%S} UTC "
        f"({ago} ago): a run that stalls waits until one does; {start}"
    )
