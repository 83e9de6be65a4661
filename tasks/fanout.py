"""A fan-out run's specialist, as a Celery task of its own."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from services import specialists
from services.control import holder

log = logging.getLogger(__name__)


@shared_task(
    name="tasks.fanout.specialist",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    # Waiting for a slot retries for as long as the run keeps the slot taken. Celery reads
    # `retry(max_retries=None)` as "the task's default" (3), so the unlimited bound is the
    # task's own: with 3, a capped run's queued specialists were dropped after 1.5 s and only
    # handed off again when their deadline passed.
    max_retries=None,
)
def specialist(self: Any, run_id: str, sub_id: str) -> str:
    """One specialist of a run. Takes ids, never objects: its brief is in the journal."""
    outcome = specialists.run_specialist(run_id, sub_id, f"{holder()}:{self.request.id}")
    log.info("run %s: specialist %s %s", run_id, sub_id, outcome)
    if outcome == "full":
        # Backpressure, not a failure: wait for a slot of this run's without holding a worker.
        raise self.retry(countdown=specialists.SLOT_WAIT_SECONDS)
    return outcome
