"""The run page's word on its trace's pushes to the collector (MINUTES_OTLP_ENDPOINT): the
last push, whether a person may ask for one, and while one is queued from when they may."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from journal_store import traces as journal_traces
from journal_store.models import RunSummary
from runtime import status
from services import traces


def shown(run: RunSummary) -> dict[str, Any] | None:
    """The run's last trace push, and whether one may be asked for (a run that ended, with a
    collector configured, and no push waiting, unless the one queued was given up: its
    worker died); while one waits, from when it may be asked for again (`requeue_at`)."""
    last = journal_traces.state(run.run_id)
    if not traces.enabled() and last is None:
        return None
    open_ = traces.enabled() and status.is_terminal(run.status)
    queued = last if last is not None and last["state"] == "queued" else None
    given_up = queued is not None and traces.given_up(queued["alive"])
    can_push = open_ and (queued is None or given_up)
    out: dict[str, Any] = {"last": last, "can_push": can_push}
    if queued is not None:
        heard, again = queued["alive"], queued["alive"] + traces.requeue_after()
        out |= {
            "given_up": given_up,
            "heard_at": datetime.fromtimestamp(heard, UTC),
            "requeue_at": datetime.fromtimestamp(again, UTC),
        }
    return out
