"""Projectors: keep the read models current by applying the journal in position order.

Each projector has a checkpoint (the last position it applied). Catch-up reads the events
after it in batches and applies each batch in the same transaction as the checkpoint's move,
so every event is applied exactly once even when two processes catch up at the same time (the
second waits for the checkpoint's row lock, then sees the moved checkpoint).

The logic is the runtime's folds (`runtime.views`, `runtime.diagnose`): the runs projector
stores each run's fold state as JSON and steps it with the new events only. No fold is written
twice, and a rebuild from position 0 gives exactly what the incremental path gave.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Protocol, cast

from django.db import transaction

from journal_store import queues
from journal_store.journal import DjangoJournal
from journal_store.models import (
    AuditEntry,
    BillLine,
    Checkpoint,
    Finding,
    RunState,
    RunSummary,
    StoredEvent,
    ThreadMessage,
)
from runtime import folds
from runtime.journal import Recorded
from runtime.views import ALL as RUN_FOLDS

BATCH = 2_000


def when(t: float | None) -> datetime | None:
    """A timestamp as a datetime; None when it was not recorded (reference journals: t=0)."""
    return datetime.fromtimestamp(t, tz=UTC) if t else None


def at(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=UTC)


class Projector:
    name: str
    models: tuple[Any, ...] = ()
    kinds: tuple[str, ...] | None = None  # the kinds it reads; None: every event

    def apply(self, batch: list[Recorded], using: str) -> None:
        raise NotImplementedError

    def clear(self, using: str) -> None:
        for model in self.models:
            model.objects.using(using).all().delete()


class Runs(Projector):
    """Per run: summary, bill lines, thread messages, audit entries, resume point, findings."""

    name = "runs"
    models = (RunState, RunSummary, BillLine, ThreadMessage, AuditEntry, Finding)

    def apply(self, batch: list[Recorded], using: str) -> None:
        by_run: dict[str, list[Recorded]] = defaultdict(list)
        for rec in batch:
            if rec.event.run_id:
                by_run[rec.event.run_id].append(rec)
        if not by_run:
            return
        stored = {s.run_id: s for s in RunState.objects.using(using).filter(run_id__in=by_run)}
        results: dict[str, dict[str, Any]] = {}
        for run_id, recs in by_run.items():
            row = stored.get(run_id)
            if row is None:
                row = stored[run_id] = RunState(run_id=run_id, states={})
            states = row.states
            for fold in RUN_FOLDS:
                folds.feed(fold, states.setdefault(fold.name, fold.start()), recs)
            results[run_id] = {fold.name: fold.result(states[fold.name]) for fold in RUN_FOLDS}
        RunState.objects.using(using).bulk_create(
            stored.values(),
            update_conflicts=True,
            unique_fields=["run_id"],
            update_fields=["states"],
        )
        self.write(results, using)

    def write(self, results: dict[str, dict[str, Any]], using: str) -> None:
        runs = list(results)
        for model in (BillLine, ThreadMessage, AuditEntry, Finding):
            model.objects.using(using).filter(run_id__in=runs).delete()
        summaries, bills, messages, audits, findings = [], [], [], [], []
        for run_id, r in results.items():
            s, bill, point = r["summary"], r["bill"], r["resume_point"]
            summaries.append(
                RunSummary(
                    run_id=run_id,
                    team=s["team"] or "",
                    scenario=s["scenario"] or "",
                    task=s["task"] or "",
                    started_by=s["started_by"] or "",
                    status=s["status"],
                    reason=s["reason"],
                    stage=point["stage"],
                    started_at=when(s["started"]),
                    finished_at=when(s["finished"]),
                    tokens=bill["total"]["tokens"],
                    calls=bill["total"]["calls"],
                    allowance=bill["allowance"],
                    spent=bill["spent"],
                    event_count=s["events"],
                    findings_count=len(r["findings"]),
                    last_position=s["last_position"],
                    resume_position=point["position"],
                )
            )
            for line in bill["lines"]:
                bills.append(BillLine(run_id=run_id, **line))
            for task, thread in r["threads"].items():
                for m in thread:
                    messages.append(
                        ThreadMessage(
                            run_id=run_id,
                            position=m["position"],
                            message_id=m["message_id"],
                            task_id=task,
                            performative=m["performative"],
                            sender=m["sender"],
                            recipient=m["recipient"],
                            payload=m["payload"],
                            in_reply_to=m["in_reply_to"],
                            delivered=m["delivered"],
                        )
                    )
            for a in r["audit"]:
                detail = {
                    k: v
                    for k, v in a.items()
                    if k not in ("position", "what", "who", "task_id", "human")
                }
                audits.append(
                    AuditEntry(
                        run_id=run_id,
                        position=a["position"],
                        what=a["what"],
                        who=a.get("who") or "",
                        task_id=a.get("task_id"),
                        human=bool(a.get("human")),
                        detail=detail,
                    )
                )
            for f in r["findings"]:
                detail = {k: v for k, v in f.items() if k not in ("kind", "summary", "positions")}
                findings.append(
                    Finding(
                        run_id=run_id,
                        kind=f["kind"],
                        summary=f["summary"],
                        positions=f["positions"],
                        first_position=f["positions"][0],
                        detail=detail,
                    )
                )
        RunSummary.objects.using(using).bulk_create(
            summaries,
            update_conflicts=True,
            unique_fields=["run_id"],
            update_fields=[f.name for f in RunSummary._meta.fields if f.name != "run_id"],
        )
        BillLine.objects.using(using).bulk_create(bills)
        ThreadMessage.objects.using(using).bulk_create(messages)
        AuditEntry.objects.using(using).bulk_create(audits)
        Finding.objects.using(using).bulk_create(findings)


class QueueProjector(Projector):
    """A review queue (journal_store/queues.py): a row per opened item, updated once when a
    person decides on it. Opening again (a re-import) starts the item afresh."""

    def __init__(self, queue: queues.Queue) -> None:
        self.queue = queue
        self.name = queue.name
        self.models = (queue.model,)
        self.kinds = queue.kinds

    def apply(self, batch: list[Recorded], using: str) -> None:
        queue = self.queue
        rows = queue.model._default_manager.using(using)
        for rec in batch:
            e = rec.event
            item = {queue.key: getattr(e, queue.key)}
            if isinstance(e, queue.opens):
                opened = {
                    "run_id": e.run_id,
                    "status": queues.OPEN,
                    "position": rec.position,
                    "created_at": at(e.t),
                    "decided_by": "",
                    "decided_at": None,
                    "decision_reason": "",
                }
                rows.update_or_create(**item, defaults=opened | queue.fields(e))
            elif (decision := queue.decisions.get(type(e))) is not None:
                outcome, columns = decision
                decided = cast(Decided, e)
                rows.filter(**item).update(
                    status=outcome,
                    decided_by=decided.by,
                    decided_at=when(decided.t),
                    decision_reason=decided.reason,
                    **columns(e),
                )


class Decided(Protocol):
    """What every deciding event records: who decided, when and why."""

    by: str
    reason: str
    t: float


PROJECTORS: dict[str, Projector] = {
    p.name: p for p in (Runs(), *(QueueProjector(q) for q in queues.QUEUES))
}


def named(names: Iterable[str] | None) -> list[Projector]:
    if names is None:
        return list(PROJECTORS.values())
    unknown = [n for n in names if n not in PROJECTORS]
    if unknown:
        raise ValueError(f"no projector named {', '.join(unknown)}; known: {', '.join(PROJECTORS)}")
    return [PROJECTORS[n] for n in names]


def stale(projectors: list[Projector], using: str = "default") -> bool:
    """Whether any of these read models has events left to apply: two reads, no lock. Pages
    ask this first, so a page that has nothing to catch up never takes a write lock (on SQLite,
    the database's; on PostgreSQL, a checkpoint row's, and a commit's WAL flush)."""
    top = DjangoJournal(using).last_position()
    marks = Checkpoint.objects.using(using).filter(name__in=[p.name for p in projectors])
    positions = list(marks.values_list("position", flat=True))
    return len(positions) < len(projectors) or min(positions, default=0) < top


def catch_up(
    names: Iterable[str] | None = None,
    using: str = "default",
    batch: int = BATCH,
    wait: bool = True,
) -> int:
    """Apply every event after each projector's checkpoint; the number of events applied.

    `wait=False` is for readers that can show a read model a moment old: when somebody else
    is catching it up right now (its checkpoint row is locked), leave it to them instead of
    queueing behind them. (SQLite has no row locks; its writers queue either way.)
    """
    projectors = named(names)
    if not stale(projectors, using):
        return 0
    applied = 0
    for projector in projectors:
        while True:
            with transaction.atomic(using=using):
                count, moved = step(projector, using, batch, wait)
            applied += count
            if not moved:
                break
    return applied


def step(projector: Projector, using: str, batch: int, wait: bool = True) -> tuple[int, bool]:
    """One batch, inside the caller's transaction: apply it and move the checkpoint.

    A projector that reads only some kinds asks the database for those alone, and moves its
    checkpoint over everything up to the journal's end as it was read first: positions commit
    in order, so nothing at or below that end can still appear.
    """
    Checkpoint.objects.using(using).get_or_create(name=projector.name)
    locked = Checkpoint.objects.using(using).select_for_update(skip_locked=not wait)
    checkpoint = locked.filter(name=projector.name).first()
    if checkpoint is None:
        return 0, False  # somebody else holds it, and is catching it up

    journal = DjangoJournal(using)
    top = journal.last_position()
    if top <= checkpoint.position:
        return 0, False
    where = "WHERE position > %s AND position <= %s"
    params: list[object] = [checkpoint.position, top]
    if projector.kinds is not None:
        where += " AND kind IN ({})".format(", ".join(["%s"] * len(projector.kinds)))
        params += list(projector.kinds)
    recs = journal.select(where + " ORDER BY position LIMIT %s", [*params, batch])
    if recs:
        projector.apply(recs, using)
    checkpoint.position = recs[-1].position if len(recs) == batch else top
    checkpoint.save(using=using, update_fields=["position"])
    return len(recs), True


def rebuild(names: Iterable[str] | None = None, using: str = "default", batch: int = BATCH) -> int:
    """Throw the read models away and apply the journal from position 0, in one transaction:
    readers see the old read models until the new ones are complete."""
    applied = 0
    with transaction.atomic(using=using):
        for projector in named(names):
            projector.clear(using)
            Checkpoint.objects.using(using).update_or_create(
                name=projector.name, defaults={"position": 0}
            )
            while True:
                count, moved = step(projector, using, batch)
                applied += count
                if not moved:
                    break
    return applied


def behind(using: str = "default") -> dict[str, int]:
    """How many positions each projector has still to apply (0: current)."""
    last = (
        StoredEvent.objects.using(using)
        .order_by("-position")
        .values_list("position", flat=True)
        .first()
        or 0
    )
    done = dict(Checkpoint.objects.using(using).values_list("name", "position"))
    return {name: last - done.get(name, 0) for name in PROJECTORS}
