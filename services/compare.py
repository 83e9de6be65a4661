"""Comparing two stored runs (runtime/compare.py does the work; this reads the runs).

A page must cost what it shows, not what the runs hold: each side is read from the read models
(the summary, bill lines, findings, thread rows) and from the run's decisions alone (model
calls and answers, tool results, messages, reports, the verdict), never from every event.
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Sum

from journal_store.journal import DjangoJournal
from journal_store.models import BillLine, Finding, RunState, RunSummary, ThreadMessage
from runtime import compare
from runtime.folds import Rows
from runtime.views import STORED as RUN_FOLDS
from services.runs import RunNotFound

# Two runs of this many events each may be compared here; a person comparing longer ones uses
# `python -m runtime diff` on their exports.
EVENTS_MAX = 50_000
THREAD_ROWS = 200  # messages shown per side from the divergence on
DECISIONS = (
    "ModelCalled",
    "ModelResponded",
    "ToolReturned",
    "MessageSent",
    "AgentFinished",
    "TeamFinished",
)


class TooLong(Exception):
    """A run is too long to compare on a page."""


def runs(a: str, b: str) -> compare.Comparison:
    """Compare runs `a` and `b`; RunNotFound names the first unknown id."""
    summaries = {}
    for run_id in (a, b):
        summary = RunSummary.objects.filter(run_id=run_id).first()
        if summary is None:
            raise RunNotFound(run_id)
        if summary.event_count > EVENTS_MAX:
            raise TooLong(
                f"run {run_id} has {summary.event_count:,} events; compare runs of up to "
                f"{EVENTS_MAX:,} here, or export both and use `python -m runtime diff`"
            )
        summaries[run_id] = summary
    return compare.assemble(side(summaries[a]), side(summaries[b]), a, b)


def side(run: RunSummary) -> compare.Side:
    journal = DjangoJournal()
    marks = ", ".join(["%s"] * len(DECISIONS))
    decided = journal.select(
        f"WHERE run_id = %s AND kind IN ({marks}) ORDER BY position", [run.run_id, *DECISIONS]
    )
    bill = (
        BillLine.objects.filter(run_id=run.run_id)
        .values("agent")
        .annotate(tokens=Sum("tokens"), calls=Sum("calls"))
    )

    def messages(since: int) -> list[dict[str, Any]]:
        rows = ThreadMessage.objects.filter(run_id=run.run_id, position__gte=since).order_by(
            "position"
        )[:THREAD_ROWS]
        return [
            {
                "position": m.position,
                "message_id": m.message_id,
                "performative": m.performative,
                "sender": m.sender,
                "recipient": m.recipient,
                "payload": m.payload,
                "in_reply_to": m.in_reply_to,
                "delivered": m.delivered,
            }
            for m in rows
        ]

    return compare.Side(
        outcome={
            "status": run.status,
            "reason": run.reason,
            "events": run.event_count,
            "started": run.started_at.timestamp() if run.started_at else None,
            "ended": run.finished_at.timestamp() if run.finished_at else None,
        },
        bill={r["agent"]: {"tokens": r["tokens"], "calls": r["calls"]} for r in bill},
        calls=compare.call_figures(decided),
        findings=sorted(
            set(Finding.objects.filter(run_id=run.run_id).values_list("kind", flat=True))
        ),
        steps=compare.steps(decided),
        messages=messages,
        metrics=queries_metrics(run.run_id),
    )


def queries_metrics(run_id: str) -> dict[str, Any]:
    """The run's coordination metrics from the state the projector keeps for the fold
    (runtime/metrics.py): nothing is re-folded."""
    fold = next(f for f in RUN_FOLDS if f.name == "metrics")
    text = RunState.objects.filter(run_id=run_id, fold="metrics").values_list("state", flat=True)
    state = text.first()
    result: dict[str, Any] = fold.result(json.loads(state) if state else fold.start(), Rows())
    return result
