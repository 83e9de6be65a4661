"""A run's trace as this deployment exports it, and what became of its pushes.

The options come from the settings (MINUTES_OTLP_*). Pushes are journalled on the run's
`traces-<id>` stream (runtime/events/traces.py): queued, then pushed or failed. Its last event
is the push's state, which the run page shows; a queued push with no outcome yet is one the
workers have still to send, and those count against the queue's bound.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connections

from journal_store.journal import DjangoJournal
from runtime import streams
from runtime.events import Event, TracePushed, TracePushFailed, TracePushQueued
from runtime.journal import append_next
from runtime.otel import TraceOptions


def options() -> TraceOptions:
    """The trace options the settings (MINUTES_OTLP_*) chose."""
    return TraceOptions(
        project=settings.OTLP_PROJECT,
        content=settings.OTLP_CONTENT,
        content_chars=settings.OTLP_CONTENT_CHARS,
    )


def record(run_id: str, event: Event) -> None:
    """Journal a push's step on the run's traces stream (order among writers is the journal's)."""
    append_next(
        DjangoJournal(), streams.traces(run_id), [event.model_copy(update={"run_id": run_id})]
    )


def state(run_id: str) -> dict[str, Any] | None:
    """The run's last push, as the run page shows it; None when none was ever asked for."""
    last = DjangoJournal().last(streams.traces(run_id))
    if last is None:
        return None
    e = last.event
    shown: dict[str, Any] = {"at": e.t, "endpoint": getattr(e, "endpoint", "")}
    if isinstance(e, TracePushQueued):
        return shown | {"state": "queued", "by": e.by}
    if isinstance(e, TracePushed):
        return shown | {"state": "pushed", "spans": e.spans, "attempts": e.attempts}
    if isinstance(e, TracePushFailed):
        return shown | {"state": "failed", "error": e.error, "attempts": e.attempts}
    return None


def waiting() -> int:
    """Pushes queued and not yet sent: traces streams whose last event is TracePushQueued."""
    sql = (
        "SELECT COUNT(*) FROM journal_event e WHERE e.stream LIKE %s AND e.kind = %s "
        "AND e.version = (SELECT MAX(version) FROM journal_event WHERE stream = e.stream)"
    )
    with connections["default"].cursor() as cursor:
        cursor.execute(sql, [streams.traces("") + "%", TracePushQueued.kind])
        (count,) = cursor.fetchone()
    return int(count)
