"""Every fold, through the projector, says what the runtime's views say (the code the command
line's `views` runs), on real journals: the journals in tests/fixtures and a run of every
scenario of every team; caught up in small batches as the journal grows, then rebuilt. The
runs read model's metric columns hold the metrics view's figures, and the metrics page's rollup
(journal_store/metrics_days.py) is those rows summed per team, scenario, model and day."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from journal_store import metrics_days, projection
from journal_store.journal import DjangoJournal
from journal_store.models import (
    AuditEntry,
    BillLine,
    Finding,
    MetricsDay,
    RunState,
    RunSummary,
    ThreadMessage,
)
from runtime import folds, plugins, views
from runtime.bill import model_for, models_of
from runtime.journal import Recorded
from runtime.jsonl import JsonlJournal
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.test_projection import snapshot

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"
JOURNALS = [
    *(f"fixture:{p.name}" for p in sorted(FIXTURES.glob("*.jsonl"))),
    *(
        f"{name}:{scenario}"
        for name, team in plugins.teams().items()
        for scenario in team.scenarios
    ),
]


def journal_of(fly_team, which: str) -> list[Recorded]:
    source, name = which.split(":")
    if source == "fixture":
        return JsonlJournal(FIXTURES / name).read_all()
    return JsonlJournal(fly_team(name, team=source).path).read_all()


def store(alias: str, records: list[Recorded]) -> None:
    """Append the journal in its order (a run's stream, its specialists', its coordination
    streams, interleaved as they were written), three events at most per append, catching up
    after every other append with batches of four."""
    journal = DjangoJournal(alias)
    versions: dict[str, int] = {}
    pending: list[Recorded] = []

    def flush(n: int) -> None:
        if pending:
            stream = pending[0].stream
            journal.append(stream, [r.event for r in pending], versions.get(stream, 0))
            versions[stream] = versions.get(stream, 0) + len(pending)
            pending.clear()
        if n % 2:
            projection.catch_up(using=alias, batch=4)

    for n, rec in enumerate(records):
        if pending and (pending[0].stream != rec.stream or len(pending) == 3):
            flush(n)
        pending.append(rec)
    flush(1)


def from_the_read_models(alias: str, run_id: str) -> dict[str, Any]:
    """The run's views as the dashboard reads them: rows, summary columns, fold states."""
    threads: dict[str, list[dict[str, Any]]] = {}
    for m in ThreadMessage.objects.using(alias).filter(run_id=run_id).order_by("position"):
        threads.setdefault(m.task_id, []).append(
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
        )
    audit = []
    for a in AuditEntry.objects.using(alias).filter(run_id=run_id).order_by("position"):
        entry = {"position": a.position, "what": a.what, "task_id": a.task_id, **a.detail}
        if a.who:
            entry["who"] = a.who
        if a.human:
            entry["human"] = True
        audit.append(entry)
    findings = [
        {"kind": f.kind, "summary": f.summary, "positions": f.positions, **f.detail}
        for f in Finding.objects.using(alias).filter(run_id=run_id)
    ]
    states = dict(RunState.objects.using(alias).filter(run_id=run_id).values_list("fold", "state"))
    by_name = {f.name: f for f in views.STORED}

    def result(name: str) -> Any:
        fold = by_name[name]
        state = json.loads(states[name]) if name in states else fold.start()
        return fold.result(state, folds.Rows())

    s = RunSummary.objects.using(alias).get(run_id=run_id)
    return {
        "threads": threads,
        "audit": audit,
        "findings": sorted(findings, key=lambda f: json.dumps(f, sort_keys=True)),
        "bill": result("bill"),
        "bill_lines": list(
            BillLine.objects.using(alias)
            .filter(run_id=run_id)
            .order_by("agent", "task_id")
            .values("agent", "task_id", "tokens", "calls", "prompt", "completion", "estimated")
        ),
        "resume_point": result("resume_point"),
        "metrics": result("metrics"),
        "summary": {
            "status": s.status,
            "stage": s.stage,
            "resume_position": s.resume_position,
            "events": s.event_count,
            "last_position": s.last_position,
            "tokens": s.tokens,
            "calls": s.calls,
            "allowance": s.allowance,
            "spent": s.spent,
            "findings": s.findings_count,
        },
        "metric_columns": {name: getattr(s, name) for name in METRIC_COLUMNS},
    }


def from_the_views(records: list[Recorded]) -> dict[str, Any]:
    """The same, from the runtime's views over the stored records (the command line's code)."""
    every = views.all_views(records)
    bill, point = every["bill"], every["resume_point"]
    summary = folds.run(views.Summary(), records)
    return {
        "threads": every["threads"],
        "audit": every["audit"],
        "findings": sorted(every["findings"], key=lambda f: json.dumps(f, sort_keys=True)),
        "bill": bill,
        # The rows hold a line's figures; a fork's split of them by model (`parts`) is priced
        # from the fold's state (dashboard/queries.py bill), not kept in the rows.
        "bill_lines": [{k: v for k, v in line.items() if k != "parts"} for line in bill["lines"]],
        "resume_point": point,
        "metrics": every["metrics"],
        "summary": {
            "status": every["status"],
            "stage": point["stage"],
            "resume_position": point["position"],
            "events": summary["events"],
            "last_position": summary["last_position"],
            "tokens": bill["total"]["tokens"],
            "calls": bill["total"]["calls"],
            "allowance": bill["allowance"],
            "spent": bill["spent"],
            "findings": len(every["findings"]),
        },
        "metric_columns": metric_columns(records, every["metrics"]),
    }


# The runs read model's columns the metrics page sums (services/metrics.py).
METRIC_COLUMNS = (
    "model",
    "started_on",
    "verified",
    "coord_tokens",
    "work_tokens",
    "overhead_ratio",
    "coord_seconds",
    "work_seconds",
    "handoffs",
    "failed_handoffs",
    "claims",
    "contested",
    "deliveries",
    "stale_deliveries",
    "files_written",
    "shared_files",
    "reviewed_tasks",
    "livelocked_tasks",
    "verifications",
    "independent_verifications",
    "conflicts_resolved",
    "conflicts_open",
    "conflict_latency",
    "human_wait",
    "dead_letters",
    "waits",
    "deadlocks",
    "commitments",
    "orphaned",
)


def metric_columns(records: list[Recorded], m: dict[str, Any]) -> dict[str, Any]:
    """What each of those columns must hold, read off the metrics view (docs/metrics.md) and
    the run's TeamStarted."""
    started = next((r.event for r in records if r.event.kind == "TeamStarted"), None)
    asked = models_of(started.config) if started is not None else {}  # type: ignore[attr-defined]
    overhead, latency = m["coordination_overhead_ratio"], m["conflict_resolution_latency"]
    started_at = folds.run(views.Summary(), records)["started"]
    return {
        "model": model_for(asked, "") or "",
        "started_on": datetime.fromtimestamp(started_at, UTC).date() if started_at else None,
        "verified": m["coordination_cost_per_verified_success"]["value"] is not None,
        "coord_tokens": overhead["coordination_tokens"],
        "work_tokens": overhead["work_tokens"],
        "overhead_ratio": overhead["value"],
        "coord_seconds": overhead["coordination_seconds"],
        "work_seconds": overhead["work_seconds"],
        "handoffs": m["assignment_handoff_count"]["value"],
        "failed_handoffs": m["handoff_failure_rate"]["failed"],
        "claims": m["ownership_conflict_rate"]["claims"],
        "contested": m["ownership_conflict_rate"]["contested"],
        "deliveries": m["stale_message_rate"]["deliveries"],
        "stale_deliveries": m["stale_message_rate"]["stale"],
        "files_written": m["duplicate_work_rate"]["files_written"],
        "shared_files": m["duplicate_work_rate"]["shared_files"],
        "reviewed_tasks": m["livelock_rate"]["reviewed_tasks"],
        "livelocked_tasks": m["livelock_rate"]["livelocked"],
        "verifications": m["verification_independence_rate"]["verifications"],
        "independent_verifications": m["verification_independence_rate"]["independent"],
        "conflicts_resolved": latency["resolved"],
        "conflicts_open": latency["open"],
        "conflict_latency": latency["value"],
        "human_wait": latency["waiting_for_people_seconds"],
        "dead_letters": sum(r.event.kind == "DeadLettered" for r in records),
        "waits": m["deadlock_rate"]["waits"],
        "deadlocks": m["deadlock_rate"]["deadlocks"],
        "commitments": m["commitment_orphan_rate"]["total"],
        "orphaned": m["commitment_orphan_rate"]["orphaned"],
    }


@on_every_backend()
@pytest.mark.parametrize("which", JOURNALS)
def test_the_read_models_of_a_real_journal_say_what_the_views_say(fly_team, alias, which):
    store(alias, journal_of(fly_team, which))
    runs = list(RunSummary.objects.using(alias).values_list("run_id", flat=True))
    assert runs
    journal = DjangoJournal(alias)
    incremental = snapshot(alias)
    for run_id in runs:
        stored = journal.read_run(run_id)  # at the store's positions
        assert from_the_read_models(alias, run_id) == from_the_views(stored), run_id
    assert rollup(alias) == rollup_of_the_runs(alias)
    rolled = rollup(alias)
    projection.rebuild(using=alias)
    assert snapshot(alias) == incremental
    assert rollup(alias) == rolled


def rollup(alias: str) -> dict[tuple, dict[str, int]]:
    """The metrics page's rollup as the projector keeps it."""
    fields = [*metrics_days.KEY, *metrics_days.SUMS]
    return {
        tuple(row[:4]): dict(zip(metrics_days.SUMS, row[4:], strict=True))
        for row in MetricsDay.objects.using(alias).values_list(*fields)
    }


def rollup_of_the_runs(alias: str) -> dict[tuple, dict[str, int]]:
    """The same, summed here from the runs' rows as they stand."""
    groups: dict[tuple, dict[str, int]] = {}
    for run in RunSummary.objects.using(alias).values(*metrics_days.COLUMNS):
        group = groups.setdefault(metrics_days.key(run), dict.fromkeys(metrics_days.SUMS, 0))
        for name, value in metrics_days.share(run).items():
            group[name] += value
    return groups
