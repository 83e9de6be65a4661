"""Pushing a finished run's trace to the configured OTLP collector, as a Celery task."""

from __future__ import annotations

from celery import shared_task

from services import traces


@shared_task(name="tasks.traces.push", acks_late=True)
def push(run_id: str) -> str:
    """Takes the run's id; the journal says whether a push is waiting and records its outcome.
    The push retries inside (runtime/otel/push.py): a failure is journalled, not raised."""
    return traces.push(run_id)
