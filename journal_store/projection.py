"""Projectors: keep the read models current by applying the journal in position order.

Each projector has a checkpoint (the last position it applied). A catch-up is one transaction:
it locks the checkpoints it will move, reads the events after them in batches (projectors at
the same checkpoint share one read), applies each batch and moves the checkpoints with it, so
every event is applied exactly once even when two processes catch up at the same time (the
second waits for the checkpoint rows' locks, then sees the moved checkpoints).

The logic is the runtime's folds (`runtime.views`, `runtime.diagnose`, see `runtime.folds`):
the runs projector keeps each fold's state in a row of its own per run (RunState), loads only
the folds whose kinds a batch holds, steps them with the new events, and writes the changes
they emit (journal_store/fold_rows.py): new thread and audit rows, a delivery, a bill line's
totals, a finding added, replaced or dropped, the summary's columns. A batch costs what it
holds, whatever the length of its runs, and a rebuild from position 0 gives exactly what the
incremental path gave.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol, cast

from django.db import connections, transaction

from journal_store import (
    metrics_days,
    nul,
    open_effects,
    pending_pushes,
    queues,
    search,
    stopped,
)
from journal_store.fold_rows import Batch, upsert
from journal_store.journal import DjangoJournal
from journal_store.journal_rows import SELECT, Row, from_row
from journal_store.models import (
    AuditEntry,
    BillLine,
    Checkpoint,
    Finding,
    FoldNote,
    MetricsDay,
    OpenEffect,
    PendingPush,
    RunState,
    RunSummary,
    RunTag,
    StoredEvent,
    ThreadMessage,
)
from journal_store.run_columns import COLUMNS, columns_of, when
from runtime import folds
from runtime.events import RunTagged
from runtime.folds import Fold, Out
from runtime.journal import Recorded
from runtime.views import STORED as RUN_FOLDS

BATCH = 2_000
Step = Callable[[folds.State, Recorded, Out], None]
POSITION, RUN_ID, KIND, DATA, T = 0, 4, 5, 10, 11  # columns of journal_rows.SELECT


def at(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=UTC)


class Projector:
    name: str
    models: tuple[Any, ...] = ()
    kinds: tuple[str, ...] | None = None  # the kinds it reads; None: every event
    clear_when_new = False  # emptied when its checkpoint is created (tables flush misses)

    def apply(self, rows: list[Row], using: str) -> None:
        """Apply a batch of the journal's rows (journal_rows.SELECT's columns), in order. Each row
        is decoded as it is applied and dropped after: a batch of typed events held at once
        cost twice as much to build (the allocator and the garbage collector)."""
        raise NotImplementedError

    def clear(self, using: str) -> None:
        for model in self.models:
            model.objects.using(using).all().delete()

    def set_aside(self, row: Row, using: str) -> None:
        """A run was set aside at `row` (journal_store/stopped.py), the rest of its batch
        applied: what the projector keeps of such a run (nothing, but for the summaries)."""


compact = json.JSONEncoder(separators=(",", ":")).encode  # a state as the text stored


# The duration columns, put in the upsert's rows as the backend keeps durations (SQLite:
# microseconds in an integer; PostgreSQL: an interval).
DURATIONS = {
    "waited": RunSummary._meta.get_field("waited"),
    "duration": RunSummary._meta.get_field("duration"),
}
STARTS = {f.name: compact(f.start()) for f in RUN_FOLDS}
FIRST_SUMMARY: dict[str, Any] = {"findings_count": 0}  # a new run's row, before its batch
for _fold in RUN_FOLDS:
    if _fold.name in COLUMNS:
        FIRST_SUMMARY.update(columns_of(_fold, _fold.start()))


class Runs(Projector):
    """Per run: summary, bill lines, thread messages, audit entries, resume point, findings."""

    name = "runs"
    models = (
        RunState,
        FoldNote,
        RunSummary,
        MetricsDay,
        BillLine,
        ThreadMessage,
        AuditEntry,
        Finding,
    )

    def __init__(self) -> None:
        self.routes: dict[str, tuple[Fold, ...]] = {}

    def route(self, kind: str) -> tuple[Fold, ...]:
        """The folds that look at events of this kind."""
        found = self.routes.get(kind)
        if found is None:
            found = self.routes[kind] = tuple(
                f for f in RUN_FOLDS if f.kinds is None or kind in f.kinds
            )
        return found

    def set_aside(self, row: Row, using: str) -> None:
        """A run set aside before it had a summary (its first event) gets one saying what is
        known: its id, its start as that row's time, status stopped.UNFOLDED; it had a page
        but no row in the runs list (which reads the summaries), so nobody could find it. Its
        rows are skipped from then on, and a rebuild folds it afresh."""
        run_id = row[RUN_ID]
        if RunSummary.objects.using(using).filter(run_id=run_id).exists():
            return  # it stands as it was before the event, as every set aside run does
        start = datetime.fromtimestamp(row[T], UTC) if row[T] and row[T] > 0 else None
        day = start.date() if start else None
        known = {"status": stopped.UNFOLDED, "stage": "", "started_at": start, "started_on": day}
        with connections[using].cursor() as cursor:
            self.summarize(cursor, {run_id: known}, {})  # the metrics rollup counts it too

    def apply(self, rows: list[Row], using: str) -> None:
        by_run: dict[str, list[Row]] = {}
        for row in rows:
            if row[RUN_ID]:
                by_run.setdefault(row[RUN_ID], []).append(row)
        if not by_run:
            return
        touched: dict[str, dict[str, Fold]] = {}
        for run_id, mine in by_run.items():
            concerned: dict[str, Fold] = {}
            for kind in {row[KIND] for row in mine}:
                for fold in self.route(kind):
                    concerned[fold.name] = fold
            touched[run_id] = concerned
        stored = self.load(using, touched)
        changes = Batch(using)
        saved: list[tuple[str, str, str]] = []
        started: list[tuple[str, str]] = []  # states back at their start: no row
        columns: dict[str, dict[str, Any]] = {}
        route = self.route
        for run_id, mine in by_run.items():
            concerned = touched[run_id]
            states = {
                name: json.loads(stored.get((run_id, name)) or STARTS[name]) for name in concerned
            }
            outs = {name: changes.out(run_id, name) for name in concerned}
            # Per kind, each concerned fold's step with its state and sink, looked up once.
            steps: dict[str, list[tuple[Step, folds.State, Out]]] = {}
            for row in mine:
                kind = row[KIND]
                todo = steps.get(kind)
                if todo is None:
                    todo = steps[kind] = [
                        (f.step, states[f.name], outs[f.name]) for f in route(kind)
                    ]
                rec = from_row(row)
                for step_fold, state, out in todo:
                    step_fold(state, rec, out)
            changed = columns[run_id] = {}
            for name, fold in concerned.items():
                text = compact(states[name])
                before = stored.get((run_id, name))
                if text == (before or STARTS[name]):
                    continue
                if text == STARTS[name]:
                    started.append((run_id, name))
                else:
                    saved.append((run_id, name, text))
                if name in COLUMNS:
                    changed.update(columns_of(fold, states[name]))
        changes.write()
        connection = connections[using]
        with connection.cursor() as cursor:
            table = RunState._meta.db_table
            if saved:
                upsert(
                    cursor,
                    table,
                    ("run_id", "fold"),
                    saved,
                    ("run_id", "fold", "state"),
                    ("state",),
                )
            if started:
                cursor.executemany(f"DELETE FROM {table} WHERE run_id = %s AND fold = %s", started)
            self.summarize(cursor, columns, changes.findings_delta())

    @staticmethod
    def load(using: str, touched: dict[str, dict[str, Fold]]) -> dict[tuple[str, str], str]:
        """The stored states of the folds a batch concerns (absent: still at their start)."""
        runs = list(touched)
        names = sorted({name for concerned in touched.values() for name in concerned})
        with connections[using].cursor() as cursor:
            cursor.execute(
                f"SELECT run_id, fold, state FROM {RunState._meta.db_table} "
                f"WHERE run_id IN ({', '.join(['%s'] * len(runs))}) "
                f"AND fold IN ({', '.join(['%s'] * len(names))})",
                [*runs, *names],
            )
            return {
                (run_id, fold): state
                for run_id, fold, state in cursor.fetchall()
                if fold in touched[run_id]
            }

    @staticmethod
    def summarize(cursor: Any, columns: dict[str, dict[str, Any]], delta: dict[str, int]) -> None:
        """Each run's summary row: created with the start's columns when it is new, else only
        the columns of the folds that moved, and the findings counted by what came and went;
        and the metrics rollup moved by each run's change (journal_store/metrics_days.py)."""
        old = metrics_days.before(cursor.db.alias, columns)
        metrics_days.move(
            cursor,
            old,
            {
                run_id: {
                    name: changed.get(name, (old.get(run_id) or FIRST_SUMMARY).get(name))
                    for name in metrics_days.COLUMNS
                }
                for run_id, changed in columns.items()
            },
        )
        ops = cursor.db.ops
        names = ("run_id", *FIRST_SUMMARY)
        counted = f"findings_count = {RunSummary._meta.db_table}.findings_count "
        groups: dict[tuple[tuple[str, ...], bool], list[tuple[Any, ...]]] = {}
        for run_id, changed in columns.items():
            row = {**FIRST_SUMMARY, **changed, "findings_count": delta.get(run_id, 0)}
            for name in ("started_at", "finished_at"):
                row[name] = ops.adapt_datetimefield_value(row[name])
            for name, field in DURATIONS.items():
                row[name] = field.get_db_prep_value(row[name], cursor.db)
            row["started_on"] = ops.adapt_datefield_value(row["started_on"])
            for name in ("copied_figures", "lineage", "lineage_cost"):
                row[name] = ops.adapt_json_value(row[name], None)
            groups.setdefault((tuple(changed), bool(delta.get(run_id))), []).append(
                (run_id, *row.values())
            )
        for (update, count), rows in groups.items():
            extra = counted + "+ excluded.findings_count" if count else ""
            upsert(cursor, RunSummary._meta.db_table, ("run_id",), rows, names, update, extra)


class QueueProjector(Projector):
    """A review queue (journal_store/queues.py): a row per opened item, updated once when a
    person decides on it. Opening again (a re-import) starts the item afresh."""

    def __init__(self, queue: queues.Queue) -> None:
        self.queue = queue
        self.name = queue.name
        self.models = (queue.model,)
        self.kinds = queue.kinds

    def apply(self, rows: list[Row], using: str) -> None:
        queue = self.queue
        items = queue.model._default_manager.using(using)
        for row in rows:
            rec = from_row(row)
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
                items.update_or_create(**item, defaults=opened | queue.fields(e))
            elif (decision := queue.decisions.get(type(e))) is not None:
                outcome, columns = decision
                decided = cast(Decided, e)
                items.filter(**item).update(
                    status=outcome,
                    decided_by=decided.by,
                    decided_at=when(decided.t),
                    decision_reason=decided.reason,
                    **columns(e),
                )


class Tags(Projector):
    """The tags people put on runs: a row per run and tag."""

    name = "tags"
    models = (RunTag,)
    kinds = ("RunTagged",)

    def apply(self, rows: list[Row], using: str) -> None:
        tags = RunTag.objects.using(using)
        for row in rows:
            e = cast(RunTagged, from_row(row).event)
            if e.removed:
                tags.filter(run_id=e.run_id, tag__in=e.removed).delete()
            if e.added:
                tags.bulk_create(
                    [RunTag(run_id=e.run_id, tag=t) for t in e.added], ignore_conflicts=True
                )


class Search(Projector):
    """The full-text index (journal_store/search.py): a document per event with prose."""

    name = "search"
    clear_when_new = True

    def apply(self, rows: list[Row], using: str) -> None:
        search.index(rows, using)

    def clear(self, using: str) -> None:
        search.clear(using)


class PendingPushes(Projector):
    """The whole-trace pushes waiting for a worker (journal_store/pending_pushes.py)."""

    name = pending_pushes.NAME
    models = (PendingPush,)
    kinds = pending_pushes.KINDS

    def apply(self, rows: list[Row], using: str) -> None:
        pending_pushes.apply(rows, using)


class OpenEffects(Projector):
    """The effects in flight, the effect reconciler's candidates (journal_store/open_effects.py)."""

    name = open_effects.NAME
    models = (OpenEffect,)
    kinds = open_effects.KINDS

    def apply(self, rows: list[Row], using: str) -> None:
        open_effects.apply(rows, using)


class Decided(Protocol):
    """What every deciding event records: who decided, when and why."""

    by: str
    reason: str
    t: float


PROJECTORS: dict[str, Projector] = {
    p.name: p
    for p in (
        Runs(),
        Search(),
        Tags(),
        PendingPushes(),
        OpenEffects(),
        *(QueueProjector(q) for q in queues.QUEUES),
    )
}


def named(names: Iterable[str] | None) -> list[Projector]:
    if names is None:
        return list(PROJECTORS.values())
    # Each once, however often named: a projector twice in a batch's group applies it twice.
    wanted = list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in PROJECTORS]
    if unknown:
        raise ValueError(f"no projector named {', '.join(unknown)}; known: {', '.join(PROJECTORS)}")
    return [PROJECTORS[n] for n in wanted]


def stale(projectors: list[Projector], using: str = "default") -> bool:
    """Whether any of these read models has events left to apply: one read, no lock. Pages
    and steps ask this first, so a catch-up with nothing to do is this query alone, and never
    takes a write lock (on SQLite, the database's; on PostgreSQL, a checkpoint row's, and a
    commit's WAL flush)."""
    names = [p.name for p in projectors]
    marks = ", ".join(["%s"] * len(names))
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*), MIN(position), "
            "(SELECT MAX(position) FROM journal_event) "
            f"FROM {Checkpoint._meta.db_table} WHERE name IN ({marks})",
            names,
        )
        count, lowest, top = cursor.fetchone()
    return bool(count < len(names) or (lowest or 0) < (top or 0))


def catch_up(
    names: Iterable[str] | None = None,
    using: str = "default",
    batch: int = BATCH,
    wait: bool = True,
) -> int:
    """Apply every event after each projector's checkpoint, in one transaction; the number of
    events applied (each projector counting those it read).

    `wait=False` is for readers that can show a read model a moment old: when somebody else
    is catching it up right now (its checkpoint row is locked), leave it to them instead of
    queueing behind them. (SQLite has no row locks; its writers queue either way.)
    """
    projectors = named(names)
    if not stale(projectors, using):
        return 0
    with transaction.atomic(using=using):
        return advance(projectors, using, batch, wait)


def summary_now(run_id: str, column: str) -> Any:
    """One column of the run's summary once every event written so far is applied (the run's
    status, what it has spent...): one row, where folding the run's events again would cost
    what the run has grown to. None when there is no such run."""
    catch_up()
    return RunSummary.objects.filter(run_id=run_id).values_list(column, flat=True).first()


def advance(projectors: list[Projector], using: str, batch: int, wait: bool = True) -> int:
    """Inside the caller's transaction: lock the projectors' checkpoints, then apply batch
    after batch up to the journal's end as it stood once the locks were held.

    Projectors at the same checkpoint share each read; one that reads only some kinds asks
    the database for those alone when it reads by itself. A checkpoint moves over everything
    up to that end: positions commit in order, so nothing at or below it can still appear.
    A run whose event makes a projector raise is set aside for it (journal_store/stopped.py).
    """
    marks = lock(projectors, using, wait)
    if not marks:
        return 0  # somebody else holds them all, and is catching them up
    journal = DjangoJournal(using)
    top = journal.last_position()
    start = dict(marks)
    aside = stopped.stopped(marks, using)  # the runs each projector set aside
    applied = 0
    while True:
        behind = [p for p in projectors if p.name in marks and marks[p.name] < top]
        if not behind:
            break
        after = min(marks[p.name] for p in behind)
        group = [p for p in behind if marks[p.name] == after]
        kinds = (
            None
            if any(p.kinds is None for p in group)
            else {k for p in group for k in p.kinds or ()}
        )
        rows = read(using, after, top, kinds, batch)
        for projector in group:
            wanted = projector.kinds
            mine = rows if wanted is None else [r for r in rows if r[KIND] in wanted]
            if mine:
                # In a savepoint: a run whose event raises is set aside for this projector,
                # and the others go on (journal_store/stopped.py). Every projector's rows
                # carry their run; those of no run's streams raise as before.
                stopped.apply(projector, mine, using, aside[projector.name])
            applied += len(mine)
            marks[projector.name] = rows[-1][POSITION] if len(rows) == batch else top
    moved = [(position, name) for name, position in marks.items() if position != start[name]]
    if moved:
        with connections[using].cursor() as cursor:
            cursor.executemany(
                f"UPDATE {Checkpoint._meta.db_table} SET position = %s WHERE name = %s", moved
            )
    return applied


def lock(projectors: list[Projector], using: str, wait: bool) -> dict[str, int]:
    """The checkpoints of these projectors that this transaction now holds: name -> position.
    Missing ones are created at 0 first."""
    names = [p.name for p in projectors]
    # Locked in one order (by name) by every catch-up: unordered, PostgreSQL locked them in
    # the order it found them, which an update can change (a row's new version lands
    # elsewhere in the table), and two catch-ups each holding one that the other waited for
    # deadlocked (the pending pushes' concurrency test found it).
    locked = (
        Checkpoint.objects.using(using).select_for_update(skip_locked=not wait).order_by("name")
    )
    marks = dict(locked.filter(name__in=names).values_list("name", "position"))
    missing = [n for n in names if n not in marks]
    if missing:
        # No checkpoint: the read model is applied from position 0. A table Django's flush
        # does not know of (the search index) may still hold rows: it must start empty, but
        # only where this transaction created the checkpoint. Another catch-up may have
        # created one since the look above, applied the journal and committed: emptying its
        # rows then lost them for good (its checkpoint stood past them). One skipped above,
        # held by another, exists too, and is left to the holder.
        created = create(missing, using)
        stopped.forget(created, using)  # applied from 0 again: every run is tried again
        for projector in projectors:
            if projector.name in created and projector.clear_when_new:
                projector.clear(using)
        marks.update(locked.filter(name__in=missing).values_list("name", "position"))
    return marks


def create(names: list[str], using: str) -> set[str]:
    """Insert checkpoints at 0 for those of `names` that have none; the names inserted. One
    inserted by a transaction still open is waited for, and then not inserted again."""
    with connections[using].cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Checkpoint._meta.db_table} (name, position) VALUES "
            + ", ".join(["(%s, 0)"] * len(names))
            + " ON CONFLICT (name) DO NOTHING RETURNING name",
            sorted(names),  # one order for every inserter: no two wait for each other
        )
        return {name for (name,) in cursor.fetchall()}


def read(using: str, after: int, top: int, kinds: set[str] | None, batch: int) -> list[Row]:
    """The journal's rows after `after` up to `top` (of these kinds), undecoded."""
    where = "WHERE position > %s AND position <= %s"
    params: list[Any] = [after, top]
    if kinds is not None:
        where += " AND kind IN ({})".format(", ".join(["%s"] * len(kinds)))
        params += sorted(kinds)
    with connections[using].cursor() as cursor:
        cursor.execute(f"{SELECT} {where} ORDER BY position LIMIT %s", [*params, batch])
        rows: list[Row] = cursor.fetchall()
    return [without_nul(row) if "\\u0000" in row[DATA] else row for row in rows]


def without_nul(row: Row) -> Row:
    """The row with U+FFFD for each NUL character in its event's strings (a tool that printed
    a binary file's bytes). The journal keeps what was written; the read models cannot:
    PostgreSQL's text has no NUL, and a projector that met one would fail on it at every
    catch-up after, for every run (journal_store/nul.py)."""
    return (*row[:DATA], nul.json_text(row[DATA]), *row[DATA + 1 :])


def rebuild(names: Iterable[str] | None = None, using: str = "default", batch: int = BATCH) -> int:
    """Throw the read models away and apply the journal from position 0, in one transaction:
    readers see the old read models until the new ones are complete. The runs they set aside
    are tried again (and set aside again if they still raise)."""
    projectors = named(names)
    with transaction.atomic(using=using):
        stopped.forget([p.name for p in projectors], using)
        for projector in projectors:
            projector.clear(using)
            Checkpoint.objects.using(using).update_or_create(
                name=projector.name, defaults={"position": 0}
            )
        return advance(projectors, using, batch)


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
