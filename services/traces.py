"""Pushing runs' traces to the configured OTLP collector (MINUTES_OTLP_ENDPOINT), from the workers.

When a run ends, its last step asks for a push (`run_ended`): one journalled TracePushQueued
and a task sent through services/queue.py once the step's transaction commits, so no step ever
waits on a collector. The task (`push`) sends the trace as protobuf in batches of at most
MINUTES_OTLP_BATCH_SPANS spans and MINUTES_OTLP_BATCH_BYTES bytes (runtime/otel/batches.py),
each POSTed with retries and backoff (runtime/otel/push.py) and journalled once the collector
took it (TraceBatchPushed), then journals the outcome. A failed push is shown on the run page
with a retry button (`request_push` by a person); it sends only what no batch took. The queue
is bounded: past MINUTES_OTLP_QUEUE pushes waiting, a new one is recorded as refused instead of
queued.

Live (MINUTES_OTLP_LIVE): after each step of a run that goes on, a task is sent (`step_taken`)
that pushes the spans made final since the last live push (`push_live`): the step only sends a
message, so a slow collector never slows a step. A live push folds only the events since the
last one: the fold's state is stored per run (journal_store/trace_fold.py), checked against the
journal before it is trusted, so its cost is that of a step, not of the run. Spans are counted
in the fold's order, which is the same whenever the journal is folded (runtime/otel/trace.py);
a live push claims its spans by appending TraceSpansClaimed at the version of the traces stream
it read, so two pushes cannot send the same spans, and at most one is in flight per run; it
sends them in bodies within the same bounds as the end's batches (`send_live`). The
push at the run's end completes the trace by sending what did not go live: the spans no live
push claimed, and those of live pushes that failed. What went live is not sent again, because
resending is not idempotent everywhere (Phoenix keeps the first copy of a span id; stores that
append, such as Jaeger's, keep both). It waits for a live push in flight to settle first. One
exception: a claim whose worker died with no outcome journalled is taken as failed after
`stale_after()` (its spans go with the end's push, perhaps a second time). A live push tries
once: its failure costs no backoff, and the end's push, which retries, sends its spans.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from django.conf import settings

from journal_store import trace_fold, traces
from runtime.events import (
    Event,
    TraceBatchPushed,
    TracePushed,
    TracePushFailed,
    TracePushQueued,
    TraceSpansClaimed,
    TraceSpansPushed,
    TraceSpansPushFailed,
)
from runtime.journal import WrongExpectedVersion
from runtime.otel import batches
from runtime.otel import push as otlp_push
from runtime.otel.encode import UNTIMED, untimed
from runtime.otel.spans import Span
from runtime.otel.trace import Trace
from services import queue

log = logging.getLogger(__name__)


def enabled() -> bool:
    return bool(settings.OTLP_ENDPOINT)


def endpoint() -> str:
    return otlp_push.where(settings.OTLP_ENDPOINT)


def run_ended(run_id: str) -> str:
    """A run's last step: push its trace, when a collector is configured. Queued at the
    version of the traces stream it read (a compare-and-swap), and not at all while a push is
    queued already and not `given_up`: two ends of the run (a step delivered twice, a dead
    letter's discard beside its step), or an end and a person asking, queue one push, which
    sends the trace as the journal holds it when it starts. "queued" then too; "moved" when
    the stream kept moving under it (live pushes' outcomes): the run page offers the push."""
    if not enabled():
        return "off"
    for _ in range(ASK_TRIES):
        book = traces.whole_ledger(run_id)
        if isinstance(book.last, TracePushQueued) and not given_up(book.alive()):
            return "queued"
        try:
            return request_push(run_id, at=book.version)
        except WrongExpectedVersion:
            continue  # the stream moved since it was read: read it again
    log.warning("run %s: trace push not queued: its traces stream kept moving", run_id)
    return "moved"


def request_push(run_id: str, by: str | None = None, at: int | None = None) -> str:
    """Queue a push of the run's trace: "queued", "refused" (the queue is full: recorded, to be
    retried from the run page) or "off" (no collector configured). With `at`, the version of
    the traces stream the asker read, it is journalled only if the stream is still there
    (WrongExpectedVersion otherwise)."""
    if not enabled():
        return "off"

    def write(event: Event) -> None:
        if at is None:
            traces.record(run_id, event)
        else:
            traces.record_at(run_id, event, at)

    waiting = traces.waiting()
    if waiting >= settings.OTLP_QUEUE:
        error = f"not sent: {waiting} pushes are already waiting (MINUTES_OTLP_QUEUE)"
        write(TracePushFailed(endpoint=endpoint(), error=error, attempts=0))
        log.warning("run %s: trace push refused: %s", run_id, error)
        return "refused"
    write(TracePushQueued(endpoint=endpoint(), by=by))
    queue.push_trace(run_id)
    return "queued"


class PushWaiting(Exception):
    """A person asked for a push while the run's last one is queued and may still be sending:
    refused, nothing journalled, since two pushes at once send the same batches twice."""


ASK_TRIES = 3  # reads of the traces stream a person's request (or a run's end) makes when it
# keeps moving
# A queued push not heard of for its task's hard time limit and this much more is taken as
# dead (its worker killed, its message lost): a person may ask for it again.
REQUEUE_MARGIN = 60


def requeue_after() -> int:
    """Seconds after a queued push's last sign of life (its queuing, or a batch the collector
    took) past which a person may ask for it again: no task of it can still be running."""
    return budget(live=False) + HARD_AFTER_SOFT + REQUEUE_MARGIN


def given_up(alive: float | None) -> bool:
    """Whether a queued push last heard of at `alive` is taken as dead."""
    return alive is not None and time.time() - alive > requeue_after()


def ask_for_push(run_id: str, by: str) -> str:
    """A person asks for the run's trace to be pushed (again): the run page's button and the
    API. As `request_push`, but PushWaiting, with nothing journalled, while the last push is
    queued and not `given_up`; the check and the append are one compare-and-swap, so two
    people asking at once queue one push."""
    if not enabled():
        return "off"
    for _ in range(ASK_TRIES):
        book = traces.whole_ledger(run_id)
        if isinstance(book.last, TracePushQueued) and not given_up(book.alive()):
            raise PushWaiting(still_queued(book))
        try:
            return request_push(run_id, by, at=book.version)
        except WrongExpectedVersion:
            continue  # the stream moved since it was read (a batch, an outcome): again
    raise PushWaiting("the trace's pushes kept moving while this was asked: try again")


def still_queued(book: traces.Ledger) -> str:
    """Why a person cannot ask for a push now, and from when they can."""
    queued, alive = book.last, book.alive()
    assert isinstance(queued, TracePushQueued) and alive is not None
    who = f"by {queued.by}" if queued.by else "by the run's end"
    sent = book.batch_spans()
    got = f"; {sent:,} spans reached the collector so far" if sent else ""
    since = datetime.fromtimestamp(queued.t, UTC)
    until = datetime.fromtimestamp(alive + requeue_after(), UTC)
    limit = budget(live=False) + HARD_AFTER_SOFT
    return (
        f"the trace's push is queued (asked for {who} at {since:%Y-%m-%d %H:%M:%S} UTC{got}) "
        "and may still be sending: a second push now would send the same spans again. If it "
        f"has not ended by {until:%Y-%m-%d %H:%M:%S} UTC ({requeue_after()} s after it was last "
        f"heard of: the push task's {limit} s time limit and {REQUEUE_MARGIN} s more), its "
        "worker has died and it can be asked for again"
    )


def step_taken(run_id: str) -> str:
    """After a step of a run that goes on: its new spans to the collector, when live pushes
    are on ("queued"; else "off"). Only a message is sent: the step waits for nothing."""
    if not (enabled() and settings.OTLP_LIVE):
        return "off"
    queue.push_live(run_id)
    return "queued"


def stale_after() -> float:
    """Seconds after which a live claim with no outcome is taken as failed: longer than its
    one attempt could last (with room for the fold and the journal)."""
    return settings.OTLP_TIMEOUT_SECONDS * 2 + 10


def in_flight(book: traces.Ledger) -> bool:
    return book.open is not None and time.time() - book.open.t < stale_after()


HARD_AFTER_SOFT = 30  # seconds past a push task's soft time limit, to journal its failure
# The end's push starts no batch after this many seconds: a new message sends the rest, so a
# long trace to a slow collector neither holds a worker for long nor runs out of its time.
SEND_WINDOW = 60


def budget(live: bool) -> int:
    """Seconds a push may take (its task's soft time limit): each try's deadline and the
    longest wait between tries, with room for the fold and the journal. A live push tries
    each body once and starts none after one timeout (`send_live`), so its last ends within
    two; the end's push sends batches for SEND_WINDOW seconds, then its last batch may take
    all its tries."""
    timeout = float(settings.OTLP_TIMEOUT_SECONDS)
    if live:
        return int(2 * timeout) + 60
    attempts = settings.OTLP_ATTEMPTS
    return int(attempts * timeout + (attempts - 1) * otlp_push.MAX_BACKOFF) + SEND_WINDOW + 60


def out_of_time(run_id: str) -> str:
    """The end's push ran past its task's time limit: recorded as failed (the run page offers
    it again), where it would stay queued for good."""
    book = traces.whole_ledger(run_id)
    if not isinstance(book.last, TracePushQueued):
        return "failed"  # its outcome was journalled before the limit struck
    error = f"the push did not end within its task's {budget(live=False)} s time limit"
    went = sum(b.spans for b in book.batches if b.endpoint == book.last.endpoint)
    if went:
        error += f" ({went:,} spans reached the collector in its batches; a retry sends the rest)"
    traces.record(run_id, TracePushFailed(endpoint=book.last.endpoint, error=error, attempts=0))
    log.warning("run %s: trace push failed: %s", run_id, error)
    return "failed"


def send(body: bytes, attempts: int | None = None) -> otlp_push.PushResult:
    return otlp_push.push(
        body,
        settings.OTLP_ENDPOINT,
        settings.OTLP_HEADERS,
        timeout=float(settings.OTLP_TIMEOUT_SECONDS),
        attempts=attempts or settings.OTLP_ATTEMPTS,
        backoff=settings.OTLP_BACKOFF_SECONDS,
    )


def push_live(run_id: str) -> str:
    """Send the spans made final since the last live push (a worker's task): "pushed",
    "failed" (journalled; the end's push sends them), "nothing" new, "busy" (another live push
    is in flight, or claimed first), "ended" (the run's end push sends the rest) or "off"."""
    if not (enabled() and settings.OTLP_LIVE):
        return "off"
    book = traces.live_ledger(run_id)
    if book.last is not None:
        return "ended"
    if in_flight(book):
        return "busy"  # one live push at a time: the next step's push takes what it leaves
    # The run's fold as the last live push stored it, stepped with the events since: what a
    # fold from the journal's start would hand out, at the cost of the new events only.
    walked = trace_fold.advance(run_id, traces.options(), book.cursor)
    start = max(0, book.cursor - walked.first)  # spans a push claimed already are not sent
    new = walked.spans[start:]
    if not new:
        trace_fold.save(run_id, walked)
        return "nothing"
    claim = TraceSpansClaimed(endpoint=endpoint(), first=book.cursor, count=len(new))
    try:
        traces.claim(run_id, claim, book.version)
    except WrongExpectedVersion:
        return "busy"  # the stream moved since we read it: whoever moved it goes first
    trace_fold.save(run_id, walked)  # after the claim: it never handed out more than claimed
    return send_live(run_id, claim, walked.fold.trace, new)


def send_live(run_id: str, claim: TraceSpansClaimed, trace: Trace, spans: list[Span]) -> str:
    """POST a claim's spans in bodies within the batch bounds, as the end's push cuts them
    (a step of 100 turns makes some 200 spans final, 1.4 MB: in one body a proxy's 1 MiB
    limit refused it every step), each body taken journalled as TraceSpansPushed of its own
    spans; the first that fails journals TraceSpansPushFailed of the claim's rest, which
    settles the claim (the end's push sends those spans)."""
    here, end = endpoint(), claim.first + claim.count
    limits = batches.Limits(settings.OTLP_BATCH_SPANS, settings.OTLP_BATCH_BYTES)
    # No body but the first starts later than one timeout after the claim, so the last is
    # over within two, before `stale_after()` takes the claim as dead (the end's push would
    # send its spans again).
    deadline = time.monotonic() + settings.OTLP_TIMEOUT_SECONDS
    unsent = claim.first  # the claim's first span no body delivered yet
    posts = 0

    def once(body: bytes) -> otlp_push.PushResult:
        nonlocal posts
        posts += 1
        if posts > 1 and time.monotonic() > deadline:
            raise otlp_push.PushFailed(
                "not sent: the live push had been sending for MINUTES_OTLP_TIMEOUT_SECONDS "
                f"({settings.OTLP_TIMEOUT_SECONDS} s)",
                None,
                0,
            )
        # One attempt: a live push that fails costs a worker no backoff, and its spans go
        # with the push at the run's end, which retries.
        return send(body, attempts=1)

    def took(batch: batches.Batch, size: int, result: otlp_push.PushResult) -> None:
        nonlocal unsent
        pushed = TraceSpansPushed(
            endpoint=here,
            first=batch.first,
            count=batch.count,
            bytes=size,
            attempts=result.attempts,
        )
        traces.record(run_id, pushed)
        unsent = batch.first + batch.count

    numbered = enumerate(spans, start=claim.first)
    try:
        for batch in batches.cut(numbered, trace, limits):
            batches.deliver(batch, once, took, limits)
    except otlp_push.PushFailed as exc:
        failed = TraceSpansPushFailed(
            endpoint=here,
            first=unsent,
            count=end - unsent,
            error=str(exc),
            status=exc.status,
            attempts=exc.attempts,
        )
        traces.record(run_id, failed)
        log.warning("run %s: live trace push failed: %s", run_id, exc)
        return "failed"
    return "pushed"


def push(run_id: str, until: float | None = None) -> str:
    """Send the run's trace (a worker's task): "pushed", "failed", "later" (a live push is in
    flight: sent again in a moment), "continued" (it sent batches for SEND_WINDOW seconds, or
    past `until`, a time.monotonic() deadline: a new message sends the rest), or "skipped"
    when no push is waiting (a second delivery of the same message, or the collector was
    unset since). Spans this collector has already are left out: those that went live, and
    those batches of this push took before it failed or its worker died."""
    book = traces.ledger(run_id)
    if not isinstance(book.last, TracePushQueued):
        return "skipped"
    if not enabled():
        error = "MINUTES_OTLP_ENDPOINT was unset before the push was sent"
        traces.record(run_id, TracePushFailed(endpoint=book.last.endpoint, error=error, attempts=0))
        return "failed"
    if in_flight(book):
        queue.push_trace(run_id, countdown=1.0)
        return "later"
    trace_fold.forget(run_id)  # live pushes are over ("ended"): their fold is not needed
    here = endpoint()
    upto = traces.last_position()
    numbering = batches.Numbering(run_id, traces.paged(run_id, upto), traces.options())
    if untimed(numbering.traced(traces.paged(run_id, upto))):
        traces.record(run_id, TracePushFailed(endpoint=here, error=UNTIMED, attempts=0))
        log.warning("run %s: trace not pushed: %s", run_id, UNTIMED)
        return "failed"
    earlier = [b for b in book.batches if b.endpoint == here]
    taken = batches.Taken(
        live=[(first, count) for where, first, count in book.sent if where == here],
        batches=[(b.first, b.count, b.upto) for b in earlier],
    )
    limits = batches.Limits(settings.OTLP_BATCH_SPANS, settings.OTLP_BATCH_BYTES)
    sending = batches.Batches(numbering, taken, limits)
    now: list[TraceBatchPushed] = []

    def took(batch: batches.Batch, size: int, result: otlp_push.PushResult) -> None:
        # Journalled before the next batch is sent: a push that stops after this one (a
        # failure, a worker killed) is taken up from the next.
        took_it = TraceBatchPushed(
            endpoint=here,
            first=batch.first,
            count=batch.count,
            spans=len(batch),
            bytes=size,
            attempts=result.attempts,
            upto=upto,
        )
        traces.record(run_id, took_it)
        now.append(took_it)

    deadline = time.monotonic() + SEND_WINDOW if until is None else until
    for batch in sending:
        if now and time.monotonic() > deadline:
            queue.push_trace(run_id)  # the rest in a new message: a worker is not held
            return "continued"
        try:
            batches.deliver(batch, send, took, limits)
        except otlp_push.PushFailed as exc:
            error = str(exc)
            went = sum(b.spans for b in (*earlier, *now))
            if went:
                error += (
                    f" ({went:,} spans reached the collector in the batches before it; a retry "
                    "sends the rest)"
                )
            traces.record(
                run_id,
                TracePushFailed(
                    endpoint=here, error=error, status=exc.status, attempts=exc.attempts
                ),
            )
            log.warning("run %s: trace push failed: %s", run_id, error)
            return "failed"
    every = [*earlier, *now]
    pushed = TracePushed(
        endpoint=here,
        spans=numbering.total - sending.live,  # with what batches before a failure sent
        bytes=sum(b.bytes for b in every),
        attempts=max((b.attempts for b in every), default=1),
    )
    traces.record(run_id, pushed)
    return "pushed"
