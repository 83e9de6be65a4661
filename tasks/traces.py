"""Pushing runs' traces to the configured OTLP collector, as Celery tasks: a finished run's
whole trace, and (MINUTES_OTLP_LIVE) the spans of a run that goes on as they end.

Each task has a time limit, from the settings as the worker read them at its start: a push
holds a worker (one, in docs/broker.md's and the demo's setup) while it lasts, and other runs'
steps wait behind it. Each POST is over by its own deadline (runtime/otel/push.py); the limit is
what is left to stop when something else hangs. The end's push sends its batches for a while
(services/traces.SEND_WINDOW), then leaves the rest to a new message. Past the soft limit the
end's push is recorded as failed, so it can be retried from the run page (the batches it sent
are not sent again); a live push's claim is taken as failed once
it is stale (services/traces.stale_after), and its spans go with the end's push.
"""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from services import traces


@shared_task(
    name="tasks.traces.push",
    acks_late=True,
    soft_time_limit=traces.budget(live=False),
    time_limit=traces.budget(live=False) + traces.HARD_AFTER_SOFT,
)
def push(run_id: str) -> str:
    """Takes the run's id; the journal says whether a push is waiting and records its outcome.
    The push retries inside (runtime/otel/push.py): a failure is journalled, not raised."""
    try:
        return traces.push(run_id)
    except SoftTimeLimitExceeded:
        return traces.out_of_time(run_id)


@shared_task(
    name="tasks.traces.push_live",
    acks_late=True,
    soft_time_limit=traces.budget(live=True),
    time_limit=traces.budget(live=True) + traces.HARD_AFTER_SOFT,
)
def push_live(run_id: str) -> str:
    """Takes the run's id; the traces stream says which spans went live already, and a claim
    there keeps two deliveries from sending the same spans."""
    try:
        return traces.push_live(run_id)
    except SoftTimeLimitExceeded:
        return "failed"  # its claim goes stale, and the end's push sends its spans
