"""A run's trace as this deployment exports it, and what became of its pushes.

The options come from the settings (MINUTES_OTLP_*). Pushes are journalled on the run's
`traces-<id>` stream (runtime/events/traces.py): the whole trace's push is queued, then pushed
or failed, and its last such event is the state the run page shows; a queued push with no
outcome yet is one the workers have still to send, and those count against the queue's bound.
Live pushes (MINUTES_OTLP_LIVE) add their claims and outcomes on the same stream, and the
ledger (`ledger`) reads both: which spans went live, which claim is still in flight. The whole
push journals each batch the collector took (TraceBatchPushed), so that a push taken up again
sends only what no batch took.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from django.conf import settings

from journal_store import pending_pushes
from journal_store.journal import DjangoJournal, prefix_range
from runtime import streams
from runtime.events import (
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    Event,
    TraceBatchPushed,
    TracePushed,
    TracePushFailed,
    TracePushQueued,
    TraceSpansClaimed,
    TraceSpansPushed,
    TraceSpansPushFailed,
)
from runtime.journal import Recorded, append_next
from runtime.otel import TraceOptions

WHOLE = (TracePushQueued, TracePushed, TracePushFailed)  # the whole trace's push
# What opens or ends a wait for a person outside the run's own and specialists' streams: a
# parked conflict and its decision (conflict-<id>), a dead letter of the control stream and its
# retry or discard (runtime/otel/waits.py takes the same records).
WAIT_KINDS = (
    ConflictParked.kind,
    ConflictResolved.kind,
    DeadLettered.kind,
    DeadLetterRetried.kind,
    DeadLetterDiscarded.kind,
)


def options() -> TraceOptions:
    """The trace options the settings (MINUTES_OTLP_*) chose."""
    return TraceOptions(
        project=settings.OTLP_PROJECT,
        content=settings.OTLP_CONTENT,
        content_chars=settings.OTLP_CONTENT_CHARS,
    )


def waits_for_people(run_id: str, after: int = 0, upto: int | None = None) -> list[Recorded]:
    """The run's parked conflicts and control-stream dead letters, with their decisions,
    after position `after` and up to `upto` (None: to the end, where a decision taken after
    the run's last event lands). They are on streams the run's own reads do not cover, so a
    run that waited days for a person showed no wait at all (the trace tab, the OTLP trace)."""
    where, params = waits(run_id)
    bound = "" if upto is None else " AND position <= %s"
    return DjangoJournal().select(
        f"WHERE run_id = %s AND {where} AND position > %s{bound} ORDER BY position",
        [run_id, *params, after, *([] if upto is None else [upto])],
    )


PAGE = 250  # of the run's records the whole push holds at a time (a few KB each, with content)


def own(run_id: str) -> tuple[str, list[Any]]:
    """The WHERE clause of the run's own streams in its trace: its stream and its
    specialists' (worker-<id>-...). What the trace tab folds as calls (dashboard/trace.py);
    `traced` adds the run's waits for a person to it."""
    streams_of, params = own_streams(run_id)
    return f"run_id = %s AND ({streams_of})", [run_id, *params]


def own_streams(run_id: str) -> tuple[str, list[Any]]:
    """`own` but the run_id: each row must be the run's by its run_id too, as a run named as
    another's id and a dash ("r-1-b" beside "r-1") has specialists' streams that begin with
    the other's prefix."""
    workers, params = named_from("worker-" + run_id + "-")
    return f"stream = %s OR ({workers})", [streams.journal(run_id), *params]


def waits(run_id: str) -> tuple[str, list[Any]]:
    """The clause of the records that open or end a wait for a person on a conflict's or the
    run's control stream (WAIT_KINDS), to go beside a run_id = %s."""
    marks = ", ".join(["%s"] * len(WAIT_KINDS))
    conflicts, params = named_from("conflict-")
    return (
        f"kind IN ({marks}) AND (({conflicts}) OR stream = %s)",
        [*WAIT_KINDS, *params, streams.control(run_id)],
    )


def named_from(prefix: str) -> tuple[str, list[Any]]:
    """The clause of the streams whose names start with `prefix`, as the journal's read_prefix
    and the runtime's reads of a run (flight.traced_records) take them: a range in byte order
    (journal.prefix_range), where a LIKE needed the prefix's %, _ and \\ escaped, and on
    SQLite, whose LIKE ignores the case of ASCII letters, took a `WORKER-<run>-...` stream
    into the run's trace that no other read of the run holds. Narrowed by the run's id first,
    it filters the run's rows either way."""
    return prefix_range(DjangoJournal().connection.vendor, prefix)


def traced(run_id: str) -> tuple[str, list[Any]]:
    """The WHERE clause of what the run's trace reads, the push, the download and the trace
    tab alike: its own streams (`own`) and its waits for a person (`waits`). The one
    definition: the tab reads the two apart, through these same clauses (a wait is drawn
    as a mark, never folded as a call; its window counts the run's own events)."""
    streams_of, params = own_streams(run_id)
    wait, wait_params = waits(run_id)
    return f"run_id = %s AND ({streams_of} OR ({wait}))", [run_id, *params, *wait_params]


def last_position() -> int:
    """The journal's last position: what a push reads the run up to, so that a record
    added while it sends (a late decision) is not half in its trace."""
    return DjangoJournal().last_position()


def paged(run_id: str, upto: int | None = None) -> Iterator[Recorded]:
    """The run's traced records (`traced`) up to position `upto` (None: to the end), in
    journal order, read a page at a time by the index on (run_id, position): what the whole
    push folds and what the download streams, in the memory of a page, not of the run. The
    run's other streams (lease, control but its dead letters, traces, sagas) are passed over
    in the database, not read."""
    journal = DjangoJournal()
    where, params = traced(run_id)
    bound = "" if upto is None else " AND position <= %s"
    after = 0
    while True:
        page = journal.select(
            f"WHERE {where} AND position > %s{bound} ORDER BY position LIMIT %s",
            [*params, after, *([] if upto is None else [upto]), PAGE],
        )
        yield from page
        if len(page) < PAGE:
            return
        after = page[-1].position


def records(run_id: str) -> list[Recorded]:
    """What the run's OTLP trace reads, as a list: `paged` to the journal's end. For tests and
    benches that want them at once; the push and the download stream `paged` instead."""
    return list(paged(run_id))


def record(run_id: str, event: Event) -> None:
    """Journal a push's step on the run's traces stream (order among writers is the journal's).
    A live push's outcome is stamped with the run's live spans so far (`live`) as it lands,
    under the journal's append lock: two outcomes landing at once each count the other."""

    def stamp(e: Event) -> Event:
        if not isinstance(e, TraceSpansPushed):
            return e
        return e.model_copy(update={"live": live_total(run_id) + e.count})

    append_next(
        DjangoJournal(),
        streams.traces(run_id),
        [event.model_copy(update={"run_id": run_id})],
        stamp=stamp if isinstance(event, TraceSpansPushed) else None,
    )


def live_total(run_id: str, before: int | None = None) -> int:
    """The spans the collector took live from the run before position `before` (None: all
    so far): the newest outcome's `live`, one row by index. A journal written before v2 has
    none: its outcomes are summed, once (the next outcome stamped carries the sum on)."""
    if before is not None and before <= 0:
        return 0
    newest = of_kind(run_id, TraceSpansPushed.kind, before=before, newest=1)
    if not newest:
        return 0
    last = newest[0].event
    assert isinstance(last, TraceSpansPushed)
    if last.live is not None:
        return last.live
    upto = newest[0].position + 1
    return sum(count for _, _, count in live_sent(run_id, 0, upto))


@dataclass
class Ledger:
    """What a run's traces stream says of its pushes.

    version  the stream's version as read: a live claim is appended at it (compare-and-swap)
    last     the whole trace's push: its last event (queued, pushed or failed), or None
    cursor   spans claimed by live pushes so far: the next live push starts there
    open     a live claim not settled yet (a push in flight, or one whose worker died)
    sent     live pushes the collector took since the whole trace was last pushed, as
             (endpoint, first, count): the whole push leaves those spans out
    batches  the whole push's batches the collector took since the whole trace was last
             pushed: a push taken up again (retried, or after its worker died) leaves those out
    """

    version: int = 0
    last: Event | None = None
    cursor: int = 0
    open: TraceSpansClaimed | None = None
    sent: list[tuple[str, int, int]] = field(default_factory=list)
    live_failed: str | None = None  # the last live push's error, if it failed
    went_live: int = 0  # spans sent live before the last whole push (it left them out)
    batches: list[TraceBatchPushed] = field(default_factory=list)

    def live_spans(self) -> int:
        return sum(count for _, _, count in self.sent)

    def batch_spans(self) -> int:
        """Spans the whole push's batches sent so far (to any collector)."""
        return sum(b.spans for b in self.batches)

    def alive(self) -> float | None:
        """When the queued whole push last showed life: its queuing, or the newest batch the
        collector took since (a push sends for a while, then goes on in a new message); None
        when no push is queued."""
        if not isinstance(self.last, TracePushQueued):
            return None
        return max([self.last.t, *(b.t for b in self.batches)])


def ledger(run_id: str) -> Ledger:
    """The run's traces stream, read as a ledger of its pushes."""
    book = Ledger()
    for rec in DjangoJournal().read(streams.traces(run_id)):
        e = rec.event
        book.version = rec.version
        if isinstance(e, TraceSpansClaimed):
            book.open = e
            book.cursor = e.first + e.count
        elif isinstance(e, TraceSpansPushed | TraceSpansPushFailed):
            if book.open is not None and settles(book.open, e):
                book.open = None
            if isinstance(e, TraceSpansPushed):
                book.sent.append((e.endpoint, e.first, e.count))
                book.live_failed = None
            else:
                book.live_failed = e.error
        elif isinstance(e, TraceBatchPushed):
            book.batches.append(e)
        elif isinstance(e, WHOLE):
            book.last = e
            if isinstance(e, TracePushed):
                book.went_live = book.live_spans()
                book.sent = []  # the collector has the whole trace: a new push sends it all
                book.batches = []
    return book


def settles(claim: TraceSpansClaimed, outcome: TraceSpansPushed | TraceSpansPushFailed) -> bool:
    """Whether the outcome is the claim's last: a claim is sent in bodies in order, each body
    taken journalled with its own spans, and the first failure journals the claim's rest, so
    the outcome reaching the claim's last span settles it (one outcome of the whole claim, as
    every claim had before live pushes were cut into bodies, does too)."""
    return outcome.first + outcome.count == claim.first + claim.count


def of_kind(
    run_id: str, kind: str, after: int = 0, before: int | None = None, newest: int | None = None
) -> list[Recorded]:
    """The run's traces stream's events of one kind between positions `after` and `before`,
    in journal order (with `newest`, only that many, the newest): a seek on (run_id, kind,
    position) and the rows asked for, not the stream. One kind a query: an IN list of kinds
    made SQLite walk the run's every event back from its end instead."""
    bound = "" if before is None else " AND position < %s"
    order = "DESC" if newest is not None else ""
    limit = "" if newest is None else f" LIMIT {int(newest)}"
    found = DjangoJournal().select(
        f"WHERE run_id = %s AND kind = %s AND stream = %s AND position > %s{bound}"
        f" ORDER BY position {order}{limit}",
        [run_id, kind, streams.traces(run_id), after, *([] if before is None else [before])],
    )
    return found[::-1] if newest is not None else found


def last_of(run_id: str, *kinds: type[Event]) -> Recorded | None:
    """The newest event of the run's traces stream among `kinds`, a seek each."""
    found = [rec for k in kinds for rec in of_kind(run_id, k.kind, newest=1)]
    return max(found, key=lambda rec: rec.position) if found else None


def live_ledger(run_id: str) -> Ledger:
    """What a live push reads of the ledger (`version`, `last`, `cursor`, `open`; not `sent`),
    from a few rows found by index, not the whole stream: a live push's cost stays flat
    however many pushes the run had. The same values as `ledger` gives for those fields."""
    journal = DjangoJournal()
    stream = streams.traces(run_id)
    book = Ledger(version=journal.version(stream))
    whole = last_of(run_id, *WHOLE)
    book.last = whole.event if whole is not None else None
    last_claim = last_of(run_id, TraceSpansClaimed)
    if last_claim is not None:
        claimed = last_claim.event
        assert isinstance(claimed, TraceSpansClaimed)
        book.open = claimed
        book.cursor = claimed.first + claimed.count
        for rec in journal.read(stream, after=last_claim.version):  # its outcome, if any
            e = rec.event
            if isinstance(e, TraceSpansPushed | TraceSpansPushFailed) and settles(claimed, e):
                book.open = None
    return book


def whole_ledger(run_id: str) -> Ledger:
    """What the whole push's askers read of the ledger (`version`, `last`, `batches`; not the
    live fields): the run's end and a person asking (services/traces.py), the run page's
    status. A seek for each whole-push kind and the batches since the trace was last pushed
    (one push's at most, by index), not the stream, which grows by a batch at a time and a
    live push at every step: flat however many pushes the run had. The same values as
    `ledger` gives for those fields. The version is read first: a row that lands after it is
    among those read, so an append at that version is refused, never made over an unread
    push."""
    book = Ledger(version=DjangoJournal().version(streams.traces(run_id)))
    whole = last_of(run_id, *WHOLE)
    book.last = whole.event if whole is not None else None
    pushed = last_of(run_id, TracePushed)
    since = pushed.position if pushed is not None else 0
    book.batches = [
        cast(TraceBatchPushed, rec.event) for rec in of_kind(run_id, TraceBatchPushed.kind, since)
    ]
    return book


def live_sent(run_id: str, after: int, before: int | None = None) -> list[tuple[str, int, int]]:
    """The live pushes the collector took between positions `after` and `before`, as
    `Ledger.sent` holds them."""
    return [
        (e.endpoint, e.first, e.count)
        for e in (rec.event for rec in of_kind(run_id, TraceSpansPushed.kind, after, before))
        if isinstance(e, TraceSpansPushed)
    ]


def claim(run_id: str, event: TraceSpansClaimed, version: int) -> None:
    """Journal a live push's claim at the version its pusher read; WrongExpectedVersion when
    the stream moved (another push claimed first, or the run's end queued the whole push)."""
    record_at(run_id, event, version)


def record_at(run_id: str, event: Event, version: int) -> None:
    """Journal a push's step at the version of the traces stream its writer read (a
    compare-and-swap); WrongExpectedVersion when the stream moved since."""
    DjangoJournal().append(
        streams.traces(run_id), [event.model_copy(update={"run_id": run_id})], version
    )


def state(run_id: str) -> dict[str, Any] | None:
    """The run's last push of its whole trace, as the run page shows it ("live" while the run
    goes on and only live pushes were made); None when no push was ever made or asked for.
    Spans pushed live before the whole push are counted in `live`.

    Read by index (`whole_ledger`), not the whole stream: of the live pushes, the newest
    outcome's running total (`live_total`) now and where the trace was last pushed (a
    journal from before the total sums its outcomes instead)."""
    book = whole_ledger(run_id)
    e = book.last
    pushes = of_kind(run_id, TracePushed.kind, newest=2)
    since = pushes[-1].position if pushes else 0
    live = 0  # spans pushed live since the whole trace was last pushed
    if not isinstance(e, TracePushed):
        live = live_total(run_id) - live_total(run_id, since)
    if e is None:
        outcome = last_of(run_id, TraceSpansPushed, TraceSpansPushFailed)
        if outcome is not None and isinstance(outcome.event, TraceSpansPushFailed):
            book.live_failed = outcome.event.error
        if not (live or book.live_failed):
            return None
        # The run goes on, its spans pushed live: how many so far, and the last failure.
        return {"state": "live", "spans": live, "error": book.live_failed}
    if isinstance(e, TracePushed):
        before = pushes[0].position if len(pushes) == 2 else 0
        book.went_live = live_total(run_id, since) - live_total(run_id, before)
    shown: dict[str, Any] = {"at": e.t, "endpoint": getattr(e, "endpoint", ""), "live": 0}
    # `sent`: spans batches of a push not yet complete delivered (a retry sends the rest).
    if isinstance(e, TracePushQueued):
        return shown | {
            "state": "queued",
            "by": e.by,
            "live": live,
            "sent": book.batch_spans(),
            "alive": book.alive(),
        }
    if isinstance(e, TracePushed):
        # `spans` counts the whole trace: what this push sent, and what went live before it.
        return shown | {
            "state": "pushed",
            "spans": e.spans + book.went_live,
            "live": book.went_live,
            "attempts": e.attempts,
        }
    if isinstance(e, TracePushFailed):
        return shown | {
            "state": "failed",
            "error": e.error,
            "attempts": e.attempts,
            "live": live,
            "sent": book.batch_spans(),
        }
    return None


def waiting(using: str = "default") -> int:
    """Pushes queued and not yet sent: traces streams whose last push of the whole trace is
    TracePushQueued (a live push's outcome may come after it). Read from their read model
    (journal_store/pending_pushes.py) and the pushes journalled since it was caught up, so
    the count costs what is waiting, not every push ever made.

    It writes nothing, however far behind the read model is (or if it never ran): a page or a
    run's end that counts takes no write lock and moves no checkpoint. It does not fall back
    to "at least N" when far behind either: no lower bound can be had without the unprojected
    pushes (an outcome among them may close any row), and a count the journal does not say
    would let the queue's bound be passed, or refuse a push, just when the store is behind.
    So it reads them all; that read is bounded by the positions after the checkpoint (a range
    of the primary key, its kinds picked out in the database: only pushes come back), what a
    catch-up would have read, without its write. Steps and pages catch every projector up as
    they go, so at a run's end it is a handful (docs/benchmarks.md, bench/pending_pushes.py).
    """
    at, _ = pending_pushes.checkpoint(using)
    return pending_pushes.count(at or 0, using)
