"""The run's step and the reconciler that revives stalled runs, as Celery tasks."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from services import steps
from services.beat import REVIVING, round_of
from services.control import holder


@shared_task(
    name="tasks.runs.advance",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    # Only a briefly unavailable database is Celery's to retry; a step that raises anything
    # else is recorded and retried by the step itself, counted by its lease (services/steps.py).
    max_retries=5,
)
def advance(self: Any, run_id: str, sent: int | None = None) -> str:
    """One step of a run. Takes an id, never an object: it reads everything from the journal.
    `sent`: the run's lease stream's version when the message was sent (None in a message
    queued before messages carried it)."""
    # Its hostname: the run's next step is sent back to this worker, where its flight is parked.
    worker = f"{holder()}:{self.request.id}"
    try:
        return steps.drive_step(run_id, worker, self.request.hostname, sent=sent)
    except steps.TRANSIENT as exc:
        # Retried carrying the lease's version as it stands now, as a next step's message
        # does: the step may have taken the lease before the database went, and a retry
        # carrying the first `sent` found the run taken since and did nothing ("moved"), so
        # the run waited for the stall sweep (a minute) and was noted stalled.
        again = steps.backoff(self.request.retries + 1)
        raise self.retry(
            args=(run_id, steps.sent_again(run_id, sent)), exc=exc, countdown=again
        ) from exc


@shared_task(name="tasks.runs.reconcile")
def reconcile() -> list[str]:
    """On the beat: re-enqueue running runs that nobody is driving."""
    return round_of(REVIVING, steps.revive_stalled)
