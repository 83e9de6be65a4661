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
)
def specialist(self: Any, run_id: str, sub_id: str) -> str:
    """One specialist of a run. Takes ids, never objects: its brief is in the journal."""
    outcome = specialists.run_specialist(run_id, sub_id, f"{holder()}:{self.request.id}")
    log.info("run %s: specialist %s %s", run_id, sub_id, outcome)
    if outcome == "full":
        # Backpressure, not a failure: wait for a slot of this run's without holding a worker.
        raise self.retry(countdown=specialists.SLOT_WAIT_SECONDS, max_retries=None)
    return outcome
