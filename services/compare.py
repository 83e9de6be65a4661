"""Comparing two stored runs (runtime/compare.py does the work; this reads the runs).

A page must cost what it shows, not what the runs hold: each side is read from the read models
(the summary, bill lines, findings, thread rows) and from the run's decisions alone (model
calls and answers, tool results, messages, reports, the verdict), never from every event.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from typing import Any

from django.db.models import Sum

from journal_store.journal import DjangoJournal
from journal_store.journal_rows import from_row
from journal_store.models import BillLine, Finding, RunState, RunSummary, ThreadMessage
from runtime import compare
from runtime.events import BY_KIND
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


def decisions(run_id: str) -> tuple[list[compare.Step], dict[str, dict[str, Any]]]:
    """The run's steps and model-call figures, read from the rows' JSON: a typed event is built
    only for a row written at an older version of its kind (the upcasters read it)."""
    marks = ", ".join(["%s"] * len(DECISIONS))
    journal = DjangoJournal()
    seen: Counter[tuple[str, str]] = Counter()
    steps: list[compare.Step] = []
    asked: dict[tuple[str, str], float] = {}
    times: dict[str, list[float]] = defaultdict(list)
    answers: Counter[str] = Counter()
    for row in journal.rows(
        f"WHERE run_id = %s AND kind IN ({marks}) ORDER BY position", [run_id, *DECISIONS]
    ):
        position, _, stream, version, _, kind, v, agent, _, _, data, t = row
        lane = (stream, agent or "team")
        if kind == "ModelCalled":
            asked[lane] = t
            continue
        if kind == "ModelResponded":
            answers[agent or "team"] += 1
            if lane in asked:
                times[lane[1]].append(max(0.0, t - asked.pop(lane)))
        current = BY_KIND.get(kind)
        if current is not None and v == current.v:
            decided = compare.content_of_data(kind, agent, json.loads(data))
        else:
            decided = compare.content_of(from_row(row).event)
        if decided is None:
            continue
        who, what, content = decided
        seen[(who, what)] += 1
        steps.append(compare.Step(who, what, seen[(who, what)], version, position, content, stream))
    calls = {
        agent: {
            "calls": answers[agent],
            "median_s": round(statistics.median(times[agent]), 4) if times[agent] else None,
            "total_s": round(sum(times[agent]), 4) if times[agent] else None,
        }
        for agent in answers
    }
    return steps, calls


def side(run: RunSummary) -> compare.Side:
    steps, calls = decisions(run.run_id)
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
        calls=calls,
        findings=sorted(
            set(Finding.objects.filter(run_id=run.run_id).values_list("kind", flat=True))
        ),
        steps=steps,
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
