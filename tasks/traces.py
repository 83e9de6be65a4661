"""Pushing runs' traces to the configured OTLP collector, as Celery tasks: a finished run's
whole trace, and (MINUTES_OTLP_LIVE) the spans of a run that goes on as they end."""

from __future__ import annotations

from celery import shared_task

from services import traces


@shared_task(name="tasks.traces.push", acks_late=True)
def push(run_id: str) -> str:
    """Takes the run's id; the journal says whether a push is waiting and records its outcome.
    The push retries inside (runtime/otel/push.py): a failure is journalled, not raised."""
    return traces.push(run_id)


@shared_task(name="tasks.traces.push_live", acks_late=True)
def push_live(run_id: str) -> str:
    """Takes the run's id; the traces stream says which spans went live already, and a claim
    there keeps two deliveries from sending the same spans."""
    return traces.push_live(run_id)
