"""Pushing runs' traces to the configured OTLP collector (MINUTES_OTLP_ENDPOINT), from the workers.

When a run ends, its last step asks for a push (`run_ended`): one journalled TracePushQueued
and a task sent through services/queue.py once the step's transaction commits, so no step ever
waits on a collector. The task (`push`) encodes the trace as protobuf, POSTs it with retries
and backoff (runtime/otel/push.py), and journals the outcome. A failed push is shown on the run
page with a retry button (`request_push` by a person). The queue is bounded: past
MINUTES_OTLP_QUEUE pushes waiting, a new one is recorded as refused instead of queued.
"""

from __future__ import annotations

import logging

from django.conf import settings

from journal_store import traces
from journal_store.journal import DjangoJournal
from runtime import flight, otel
from runtime.events import TracePushed, TracePushFailed, TracePushQueued
from runtime.otel import push as otlp_push
from services import queue

log = logging.getLogger(__name__)


def enabled() -> bool:
    return bool(settings.OTLP_ENDPOINT)


def endpoint() -> str:
    return otlp_push.where(settings.OTLP_ENDPOINT)


def run_ended(run_id: str) -> str:
    """A run's last step: push its trace, when a collector is configured."""
    return request_push(run_id) if enabled() else "off"


def request_push(run_id: str, by: str | None = None) -> str:
    """Queue a push of the run's trace: "queued", "refused" (the queue is full: recorded, to be
    retried from the run page) or "off" (no collector configured)."""
    if not enabled():
        return "off"
    waiting = traces.waiting()
    if waiting >= settings.OTLP_QUEUE:
        error = f"not sent: {waiting} pushes are already waiting (MINUTES_OTLP_QUEUE)"
        traces.record(run_id, TracePushFailed(endpoint=endpoint(), error=error, attempts=0))
        log.warning("run %s: trace push refused: %s", run_id, error)
        return "refused"
    traces.record(run_id, TracePushQueued(endpoint=endpoint(), by=by))
    queue.push_trace(run_id)
    return "queued"


def push(run_id: str) -> str:
    """Send the run's trace (a worker's task): "pushed", "failed", or "skipped" when no push is
    waiting (a second delivery of the same message, or the collector was unset since)."""
    state = traces.state(run_id)
    if state is None or state["state"] != "queued":
        return "skipped"
    if not enabled():
        error = "MINUTES_OTLP_ENDPOINT was unset before the push was sent"
        traces.record(run_id, TracePushFailed(endpoint=state["endpoint"], error=error, attempts=0))
        return "failed"
    records = flight.run_records(DjangoJournal(), run_id)
    message = otel.otlp_request(records, traces.options())
    body: bytes = message.SerializeToString(deterministic=True)
    spans = sum(len(s.spans) for r in message.resource_spans for s in r.scope_spans)
    try:
        sent = otlp_push.push(
            body,
            settings.OTLP_ENDPOINT,
            settings.OTLP_HEADERS,
            timeout=float(settings.OTLP_TIMEOUT_SECONDS),
            attempts=settings.OTLP_ATTEMPTS,
            backoff=settings.OTLP_BACKOFF_SECONDS,
        )
    except otlp_push.PushFailed as exc:
        traces.record(
            run_id,
            TracePushFailed(
                endpoint=endpoint(), error=str(exc), status=exc.status, attempts=exc.attempts
            ),
        )
        log.warning("run %s: trace push failed: %s", run_id, exc)
        return "failed"
    pushed = TracePushed(endpoint=endpoint(), spans=spans, bytes=len(body), attempts=sent.attempts)
    traces.record(run_id, pushed)
    return "pushed"
