"""The run's step and the reconciler that revives stalled runs, as Celery tasks."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from services import steps
from services.beat import round_of
from services.control import holder


@shared_task(
    name="tasks.runs.advance",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    # Only a briefly unavailable database is Celery's to retry; a step that raises anything
    # else is recorded and retried by the step itself, counted by its lease (services/steps.py).
    autoretry_for=steps.TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
)
def advance(self: Any, run_id: str, sent: int | None = None) -> str:
    """One step of a run. Takes an id, never an object: it reads everything from the journal.
    `sent`: the run's lease stream's version when the message was sent (None in a message
    queued before messages carried it)."""
    # Its hostname: the run's next step is sent back to this worker, where its flight is parked.
    worker = f"{holder()}:{self.request.id}"
    return steps.drive_step(run_id, worker, self.request.hostname, sent=sent)


@shared_task(name="tasks.runs.reconcile")
def reconcile() -> list[str]:
    """On the beat: re-enqueue running runs that nobody is driving."""
    return round_of("reviving stalled runs", steps.revive_stalled)
