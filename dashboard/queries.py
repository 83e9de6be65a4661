"""What the pages and the API read of a run, each built once: its events and minutes (bill,
threads, audit, resume point, findings, answer), its troubles, and the review queues. The runs
list and its filter are dashboard/listing.py's.

Events are read through the journal, so they come out decoded and upcast as the runtime folds
them; nothing here parses stored JSON itself. The minutes come from the read models the
projectors keep. Who may read what is the caller's to check (dashboard/access.py) first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import QuerySet

from dashboard import present
from journal_store import projection, queues, stopped, substrings
from journal_store.journal import DjangoJournal, prefix_range
from journal_store.journal_rows import Row
from journal_store.models import (
    AuditEntry,
    BillLine,
    Finding,
    QueueItem,
    RunState,
    RunSummary,
    StoredEvent,
    ThreadMessage,
)
from runtime import baseline, prices, streams
from runtime.events import (
    AnswerComposed,
    Event,
    EventFormatError,
    JournalImported,
    RunForked,
    TeamStarted,
    payload_json,
)
from runtime.folds import Fold, Rows
from runtime.journal import Recorded
from runtime.stops import StopRequest
from runtime.views import STORED as RUN_FOLDS
from services import baseline as baselines
from services.control import Control
from services.metrics import MetricsFilter
from services.specialists import endpoint_down

EVENTS_MAX = 1_000  # events in one answer, whoever asks
PAGE_MAX = 1_000  # messages or audit entries in one answer: a long run's are read a page at a time


def pending_stop(run_id: str) -> StopRequest | None:
    """The stop a person asked of the running run that it has not reached yet (who, why), or
    None: its control stream, a few events however long the run. None too while a row of it
    no event model reads stands unparked: the header cannot say a stop it cannot read, and the
    run's next step parks the run in a letter naming the row (services/steps.py), where the
    page answered a server error until then."""
    try:
        return Control(run_id).stop_request()
    except EventFormatError:
        return None


@dataclass(frozen=True)
class Trouble:
    """The run's steps that failed since it last moved, as its header says it."""

    since: datetime
    tries: int
    last_error: str
    outage: bool  # the model endpoint, not answering: waited out until `until`
    until: datetime | None
    attempts: int  # failed steps before a run that is not in an outage is dead-lettered


def trouble(run_id: str) -> Trouble | None:
    """Why the running run has not moved, if its steps have been failing (services/control.py
    Failing): its control stream and one seek, however long the run."""
    try:
        failing = Control(run_id).failing()
    except EventFormatError:  # as pending_stop: the next step parks the run naming the row
        return None
    if failing is None:
        return None
    waits_out = failing.outage and settings.OUTAGE_SECONDS > 0
    until = datetime.fromtimestamp(failing.since + settings.OUTAGE_SECONDS, UTC)
    return Trouble(
        since=datetime.fromtimestamp(failing.since, UTC),
        tries=failing.tries,
        last_error=failing.last_error,
        outage=failing.outage,
        until=until if waits_out else None,
        attempts=settings.MAX_STEP_ATTEMPTS,
    )


@dataclass(frozen=True)
class SpecialistDown:
    """A specialist of the running run waiting out its model endpoint, as its header says it
    (services/specialists.py endpoint_down)."""

    sub_id: str
    worker_id: str
    since: datetime
    starts: int
    last: str
    until: datetime


def specialists_down(run_id: str) -> list[SpecialistDown]:
    """The running run's specialists whose model endpoint is down, being waited out."""
    return [
        SpecialistDown(
            sub_id=d.sub_id,
            worker_id=d.worker_id,
            since=datetime.fromtimestamp(d.since, UTC),
            starts=d.starts,
            last=d.last,
            until=datetime.fromtimestamp(d.until, UTC),
        )
        for d in endpoint_down(run_id)
    ]


def numbers(positions: Iterable[int | None]) -> dict[int, str]:
    """The events at these positions by their number in their run's minutes, as the timeline
    numbers them ("57", or "lease 3" for a stream beside the run's): so that every page cites an
    event by the number the timeline shows for it. One query for the positions a page cites;
    positions that hold no event are left out."""
    wanted = {p for p in positions if p}
    if not wanted:
        return {}
    found = StoredEvent.objects.filter(position__in=wanted).values_list(
        "position", "stream", "version", "run_id"
    )
    return {p: present.number(stream, version, run_id) for p, stream, version, run_id in found}


FORKS_SHOWN = 20  # a run's forks its page and the API's detail list: its newest


def forks_of(run_id: str, parent: tuple[str, int | None] | None = None) -> Forks:
    """A run's newest forks (FORKS_SHOWN), each with where it left the run (a position here, or
    None: not found) and whether it was read from a file (what it says of its forking is then
    the file's word); and, given the run's own parent and `fork_at`, where the run left that
    parent (`Forks.at`), found in the same query."""
    children = list(
        RunSummary.objects.filter(parent_id=run_id)
        .order_by("-started_at", "-run_id")
        .values_list("run_id", "fork_at")[:FORKS_SHOWN]
    )
    own = [(run_id, parent[0], parent[1])] if parent else []
    points = fork_points(own + [(child, run_id, at) for child, at in children])
    imported = imported_of([child for child, _ in children])
    listed = [(child, points.get(child), child in imported) for child, _ in children]
    return Forks(listed, points.get(run_id) if parent else None)


@dataclass(frozen=True)
class Forks:
    listed: list[tuple[str, int | None, bool]]  # (fork, where it left the run, imported)
    at: int | None  # where the run itself left its parent


def fork_points(forks: Iterable[tuple[str, str, int | None]]) -> dict[str, int]:
    """Where each fork (its id, its parent's, its summary's `fork_at`) left its parent, as the
    position in this store of the parent's event; a fork whose point is not found is left out.

    RunForked's `at` is a position in the journal the fork was made in. A fork made on the
    command line, or in another store, and imported here names a position that here holds
    another run's event, or none: the page cited and linked that one. Its parent's event is
    then found by its number in the parent's journal (RunForked's `number`), when the fork's
    copy of it, the event before RunForked, is in the fork's own journal (a specialist's or a
    lease's event is numbered otherwise) and the parent is stored here."""
    forks = [(child, parent, at) for child, parent, at in forks if parent]
    if not forks:
        return {}
    held = dict(
        StoredEvent.objects.filter(position__in={at for _, _, at in forks if at}).values_list(
            "position", "run_id"
        )
    )
    found = {child: at for child, parent, at in forks if at and held.get(at) == parent}
    for child, parent, _ in forks:
        if child in found:
            continue
        forked = (
            StoredEvent.objects.filter(run_id=child, kind=RunForked.kind)
            .values_list("position", "data")
            .first()
        )
        if forked is None:
            continue
        before = (
            StoredEvent.objects.filter(run_id=child, position__lt=forked[0])
            .order_by("-position")
            .values_list("stream", flat=True)
            .first()
        )
        number = json.loads(forked[1]).get("number")
        if before != streams.journal(child) or not isinstance(number, int):
            continue
        position = (
            StoredEvent.objects.filter(stream=streams.journal(parent), version=number)
            .values_list("position", flat=True)
            .first()
        )
        if position is not None:
            found[child] = position
    return found


# --- a run's events -------------------------------------------------------------------------


@dataclass(frozen=True)
class EventRow:
    """One event as read (upcast to its current version): its place, its envelope, its fields."""

    position: int
    stream: str
    version: int
    kind: str
    v: int
    agent: str | None
    task_id: str | None
    turn: int | None
    t: float
    data: dict[str, Any]
    # Why no event model reads the row (a row rewritten in the table, say): its fields are
    # left empty and this is said in their place; "" for every readable event.
    unreadable: str = ""

    @property
    def at(self) -> datetime:
        return datetime.fromtimestamp(self.t, UTC)


UNREADABLE_CHARS = 500  # of why a row is unreadable: a validation error can quote the whole row


def unreadable_why(row: Row, exc: Exception) -> str:
    """Why no event model reads the row, shortened, without from_row's own words naming its
    position and kind, which the line saying it names."""
    position, kind = row[0], row[5]
    why = str(exc).removeprefix(f"the event at position {position} ({kind}) is unreadable: ")
    if len(why) > UNREADABLE_CHARS:
        why = why[: UNREADABLE_CHARS - 1] + "…"
    return why or "?"


def unreadable_row(row: Row, exc: Exception) -> EventRow:
    """A row no event model reads as an EventRow: its columns, and why not in place of its
    fields. One unreadable row must not take the rest of the run's timeline with it."""
    position, _, stream, version, _, kind, v, agent, task_id, turn, _, t = row
    why = unreadable_why(row, exc)
    return EventRow(position, stream, version, kind, v, agent, task_id, turn, float(t), {}, why)


def event_row(r: Recorded) -> EventRow:
    return EventRow(
        position=r.position,
        stream=r.stream,
        version=r.version,
        kind=r.event.kind,
        v=r.event.v,
        agent=r.event.agent,
        task_id=r.event.task_id,
        turn=r.event.turn,
        t=r.event.t,
        data=json.loads(payload_json(r.event)),
    )


# Streams that hold how a run was driven (leases of its driver, its specialists and their
# slots) or where it came from (this server's note of an import, shown in the header), not
# what it did: the timeline hides them unless asked.
INFRASTRUCTURE = ("lease-", "import-")


def events(
    run_id: str,
    after: int = 0,
    kind: str | Sequence[str] = "",
    agent: str = "",
    limit: int = 100,
    infra: bool = True,
    newest: bool = False,
) -> list[EventRow]:
    """The run's events after position `after` (of these kinds, of one agent; without the
    driving's lease streams unless `infra`), oldest first. `newest`: the last `limit` of
    them instead of the first, still oldest first (a jump to the latest)."""
    where, params = events_where(run_id, kind, agent, infra)
    where, params = where + " AND position > %s", [*params, after]
    limit = max(0, min(limit, EVENTS_MAX))
    order = "DESC" if newest else ""
    read = DjangoJournal().readings(f"{where} ORDER BY position {order} LIMIT %s", [*params, limit])
    found = [event_row(r) for r in read.records]
    found += [unreadable_row(u.row, u.error) for u in read.unreadable]
    return sorted(found, key=lambda e: e.position)  # oldest first, `newest` or not


def events_where(
    run_id: str, kind: str | Sequence[str], agent: str, infra: bool
) -> tuple[str, list[Any]]:
    """The WHERE clause (and its parameters) of the run's events of these kinds, of one agent,
    and without the driving's lease streams unless `infra`."""
    kinds = [kind] if isinstance(kind, str) else list(kind)
    kinds = [k for k in kinds if k]
    where, params = "WHERE run_id = %s", [run_id]
    if kinds:
        marks = ", ".join(["%s"] * len(kinds))
        where, params = where + f" AND kind IN ({marks})", [*params, *kinds]
    if agent:
        where, params = where + " AND agent = %s", [*params, agent]
    if not infra:
        # A range in byte order, as the journal's prefix reads take streams: SQLite's LIKE is
        # blind to ASCII case and would hide a `LEASE-...` stream no other read counts as one.
        vendor = DjangoJournal().connection.vendor
        for prefix in INFRASTRUCTURE:
            clause, bounds = prefix_range(vendor, prefix)
            where, params = where + f" AND NOT ({clause})", [*params, *bounds]
    return where, params


def page_before(
    run_id: str, before: int, count: int, kind: Sequence[str], agent: str, infra: bool
) -> int:
    """Where the page of the `count` events (so chosen) up to position `before` starts: the
    position its events come after (0: from the start). One seek in the run's index, however
    far into the run."""
    where, params = events_where(run_id, kind, agent, infra)
    sql = (
        f"SELECT position FROM journal_event {where} AND position <= %s "
        "ORDER BY position DESC LIMIT 1 OFFSET %s"
    )
    with DjangoJournal().connection.cursor() as cursor:
        cursor.execute(sql, [*params, before, count])
        found = cursor.fetchone()
    return found[0] if found else 0


def distinct(run_id: str, column: str, using: str = "default") -> list[str]:
    """The distinct values of `column` among the run's events, sorted, None and "" left out:
    a loose index scan of the index on (run_id, column)."""
    assert column in ("kind", "agent")  # a column name, never a caller's text
    return loose_scan("journal_event", column, "run_id = %s AND ", [run_id], using)


def loose_scan(table: str, column: str, scope: str, params: list[str], using: str) -> list[str]:
    """The distinct non-empty values of `table`'s `column` (under `scope`, a condition on
    columns that lead the column's index, followed by AND), sorted.

    A loose index scan: each value is one seek in the index for the next value after the last,
    so the cost is the number of values, not the number of rows (a plain DISTINCT reads every
    row). `table`, `column` and `scope` are the caller's constants, never a person's text.
    """
    sql = (
        "WITH RECURSIVE seen(v) AS ("
        f" SELECT MIN({column}) FROM {table} WHERE {scope}{column} > ''"
        " UNION ALL"
        f" SELECT (SELECT MIN({column}) FROM {table} WHERE {scope}{column} > seen.v)"
        " FROM seen WHERE seen.v IS NOT NULL"
        ") SELECT v FROM seen WHERE v IS NOT NULL"
    )
    with DjangoJournal(using).connection.cursor() as cursor:
        cursor.execute(sql, [*params, *params])
        return sorted(value for (value,) in cursor.fetchall())


def event_kinds(run_id: str) -> list[str]:
    """The kinds of event the run holds, for a filter to offer."""
    return distinct(run_id, "kind")


def event_agents(run_id: str) -> list[str]:
    return distinct(run_id, "agent")


def latest(run_id: str, kind: type[Event], first: bool = False) -> Event | None:
    """The run's newest event of this kind (its oldest with `first`), decoded, or None; None
    too when no event model reads that row: the header leaves out what it would have said of
    it, and the timeline says the row could not be read, where every tab answered 500."""
    order = "" if first else " DESC"
    try:
        found = DjangoJournal().select(
            f"WHERE run_id = %s AND kind = %s ORDER BY position{order} LIMIT 1",
            [run_id, kind.kind],
        )
    except ValueError:  # EventFormatError
        return None
    return found[0].event if found else None


def answer(run_id: str) -> AnswerComposed | None:
    """The answer a run composed (fan-out teams), as journalled: text, degraded, sources."""
    found = latest(run_id, AnswerComposed)
    return found if isinstance(found, AnswerComposed) else None


@dataclass(frozen=True)
class ViewStopped:
    """A read model that stopped applying the run at one of its events (journal_store/stopped)."""

    view: str  # the projector's name
    position: int  # the event whose fold raised; the view shows the run as before it
    kind: str
    error: str  # 'Type: message', shortened; it may quote the event (agent output)


def views_stopped(run_id: str) -> list[ViewStopped]:
    """The run's read models that stopped at one of its events, until a rebuild."""
    return [
        ViewStopped(view=s.projector, position=s.position, kind=s.kind, error=s.error)
        for s in stopped.of_run(run_id)
    ]


def origin(run_id: str) -> JournalImported | None:
    """Where an imported run came from (its file, who imported it, when), or None: flown here."""
    found = latest(run_id, JournalImported, first=True)
    return found if isinstance(found, JournalImported) else None


def imported_of(run_ids: list[str]) -> set[str]:
    """Which of `run_ids` were imported from a file (one query: a seek of the run and kind
    index for each)."""
    if not run_ids:
        return set()
    found = StoredEvent.objects.filter(kind="JournalImported", run_id__in=run_ids)
    return set(found.values_list("run_id", flat=True))


def unsandboxed(run_id: str) -> bool:
    """Whether the run was started with the sandbox turned off (MINUTES_SANDBOX=off)."""
    started = latest(run_id, TeamStarted, first=True)
    return isinstance(started, TeamStarted) and started.config.get("sandbox") is False


# --- a run's minutes, from the read models ----------------------------------------------------


def folded(run_id: str, name: str) -> Any:
    """A fold's current result from the state the projector keeps for it (nothing is
    re-folded, and no other fold's state is read); for folds whose result needs no rows."""
    fold: Fold = next(f for f in RUN_FOLDS if f.name == name)
    state = RunState.objects.filter(run_id=run_id, fold=name).values_list("state", flat=True)
    text = state.first()
    return fold.result(json.loads(text) if text else fold.start(), Rows())


def bill(run_id: str, status: str | None = None) -> dict[str, Any]:
    """Tokens and calls per agent and task, the budget (see runtime.bill.Bill), and what they
    cost in the price table (runtime.prices; per verified success when the run is done)."""
    found: dict[str, Any] = folded(run_id, "bill")
    found["money"] = prices.priced(found, settings.PRICES, verified=status == "done")
    return found


def metrics(run_id: str) -> dict[str, Any]:
    """The run's coordination metrics (see runtime.metrics.Metrics, docs/metrics.md)."""
    found: dict[str, Any] = folded(run_id, "metrics")
    return found


def comparison(run_id: str) -> dict[str, Any]:
    """The team run beside its newest single-agent baseline (runtime/baseline.py): each side's
    outcome, tokens and calls from its bill, wall time from its summary. BaselineNotFound when
    no baseline was started for it. Asked of a baseline, the same pair: its team run beside it
    (it answered that the baseline had no baseline yet, as if one could be started for it)."""
    if team_run := baselines.team_run_of(run_id):
        return baseline.compare(side(team_run), side(run_id))
    found = baselines.baselines_of(run_id)
    if not found:
        raise baselines.BaselineNotFound(run_id)
    return baseline.compare(side(run_id), side(found[-1]))


def side(run_id: str) -> dict[str, Any]:
    return baseline.side(run_id, folded(run_id, "summary"), bill(run_id))


def bill_lines(run_id: str) -> QuerySet[BillLine]:
    return BillLine.objects.filter(run_id=run_id).order_by("agent", "task_id")


def resume_point(run_id: str) -> dict[str, Any]:
    """The stage the run stands at and the position it resumes after."""
    found: dict[str, Any] = folded(run_id, "resume_point")
    return found


def messages(run_id: str, after: int = 0, limit: int = PAGE_MAX) -> list[ThreadMessage]:
    """The run's messages after position `after`, oldest first, at most `limit`."""
    limit = max(0, min(limit, PAGE_MAX))
    found = ThreadMessage.objects.filter(run_id=run_id, position__gt=after).order_by("position")
    return list(found[:limit])


def threads(run_id: str, after: int = 0, limit: int = PAGE_MAX) -> dict[str, list[ThreadMessage]]:
    """A page of the run's messages (see `messages`) by task thread, each thread in order."""
    lanes: dict[str, list[ThreadMessage]] = {}
    for message in messages(run_id, after, limit):
        lanes.setdefault(message.task_id, []).append(message)
    return lanes


def audit(run_id: str, after: int = 0, limit: int = PAGE_MAX) -> list[AuditEntry]:
    """The run's audit entries after position `after`, oldest first, at most `limit`."""
    limit = max(0, min(limit, PAGE_MAX))
    found = AuditEntry.objects.filter(run_id=run_id, position__gt=after).order_by("position")
    return list(found[:limit])


def findings(run_id: str) -> QuerySet[Finding]:
    return Finding.objects.filter(run_id=run_id).order_by("first_position")


def review_items(run_id: str) -> dict[str, list[QueueItem]]:
    """The run's items in the review queues (dead letters, conflicts), oldest first, open or
    decided: what its page links to, and how each was decided."""
    return {
        queue.name: list(queue.model._default_manager.filter(run_id=run_id).order_by("position"))
        for queue in queues.QUEUES
    }


# --- the review queues ----------------------------------------------------------------------------


def queue_rows(
    queue: queues.Queue, run: str = "", runs: MetricsFilter | None = None, words: str = ""
) -> QuerySet[QueueItem]:
    """A review queue's rows of one run (`run`) or of the runs `runs` chooses, whatever their
    status, in no order; every row when neither narrows. With `words`, only those holding
    them in one of the queue's searched columns (any case)."""
    items: QuerySet[QueueItem] = queue.model._default_manager.all()
    if run:
        items = items.filter(run_id=run)
    if words:
        # The items a trigram index names when the words are rare (journal_store/
        # substrings.py), where words no item held read every item to say so.
        said = substrings.variants(words)
        items = items.filter(queue.searched.holding(said, connections[items.db].vendor, items.db))
    return items if runs is None else runs.items(items)


def queue_items(
    queue: queues.Queue,
    status: str = queues.OPEN,
    run: str = "",
    runs: MetricsFilter | None = None,
    wait: bool = True,
    words: str = "",
) -> QuerySet[QueueItem]:
    """A review queue's items, newest first: the open ones, the decided ones (whatever the
    outcome), all, or those of one outcome (`retried`, `resolved`, ...); one run's only when
    `run` names it (what a run's page links to, and the API's `run`), and only those of the
    runs `runs` chooses when it chooses any (what the metrics page's count links to), and
    those holding `words` when given (queue_rows). A poll does not `wait` behind somebody
    else's catch-up: a moment old is fine for it."""
    projection.catch_up(wait=wait)
    items = queue_rows(queue, run, runs, words).order_by("-position")
    if status == "all":
        return items
    if status == "decided":
        return items.exclude(status=queues.OPEN)
    return items.filter(status=status)
