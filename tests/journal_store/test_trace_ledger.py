"""What the askers of a whole push (a run's end, a person, the run page) read of a run's traces
stream by index (journal_store/traces.py: `whole_ledger`, `state`) is what the whole stream
read as a ledger (`ledger`) says, through live pushes, batches, failures, retries and pushes
made again."""

from __future__ import annotations

import random
from typing import Any

import pytest

from journal_store import traces
from journal_store.journal import DjangoJournal
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
from runtime.journal import append_next

pytestmark = pytest.mark.django_db
URL = "http://collector:4318"


def by_ledger(run_id: str) -> dict[str, Any] | None:
    """The run page's status as it was read before, from the whole stream (`ledger`)."""
    book = traces.ledger(run_id)
    e = book.last
    if e is None:
        if not (book.sent or book.live_failed):
            return None
        return {"state": "live", "spans": book.live_spans(), "error": book.live_failed}
    shown: dict[str, Any] = {"at": e.t, "endpoint": e.endpoint, "live": 0}
    if isinstance(e, TracePushQueued):
        return shown | {
            "state": "queued",
            "by": e.by,
            "live": book.live_spans(),
            "sent": book.batch_spans(),
            "alive": book.alive(),
        }
    if isinstance(e, TracePushed):
        return shown | {
            "state": "pushed",
            "spans": e.spans + book.went_live,
            "live": book.went_live,
            "attempts": e.attempts,
        }
    assert isinstance(e, TracePushFailed)
    return shown | {
        "state": "failed",
        "error": e.error,
        "attempts": e.attempts,
        "live": book.live_spans(),
        "sent": book.batch_spans(),
    }


def history(rng: random.Random) -> list[Event]:
    """A run's pushes: live claims settled in bodies or failing part way, the end's push in
    batches, failing and retried, pushed again by people, stragglers after it."""
    cursor, events = 0, []
    for _ in range(rng.randint(1, 6)):  # live, while the run goes on
        count = rng.randint(1, 9)
        events.append(TraceSpansClaimed(endpoint=URL, first=cursor, count=count))
        taken = rng.randint(0, count)
        if taken:
            events.append(
                TraceSpansPushed(endpoint=URL, first=cursor, count=taken, bytes=9, attempts=1)
            )
        if taken < count and rng.random() < 0.8:  # else its worker died
            events.append(
                TraceSpansPushFailed(
                    endpoint=URL, first=cursor + taken, count=count - taken, error="503", attempts=1
                )
            )
        cursor += count
    for _ in range(rng.randint(1, 4)):  # the end's push, then people's
        events.append(TracePushQueued(endpoint=URL, by=rng.choice([None, "ann"])))
        for n in range(rng.randint(0, 3)):
            events.append(
                TraceBatchPushed(
                    endpoint=URL,
                    first=4 * n,
                    count=4,
                    spans=rng.randint(1, 4),
                    bytes=90,
                    attempts=1,
                    upto=1,
                )
            )
        if rng.random() < 0.2:  # a straggling live outcome
            events.append(
                TraceSpansPushed(endpoint=URL, first=cursor, count=2, bytes=9, attempts=1)
            )
        ending = rng.random()
        if ending < 0.5:
            events.append(TracePushed(endpoint=URL, spans=rng.randint(1, 40), bytes=9, attempts=1))
        elif ending < 0.8:
            events.append(TracePushFailed(endpoint=URL, error="HTTP 502", attempts=3))
    return events


@pytest.mark.parametrize("seed", range(8))
def test_the_reads_by_index_say_what_the_whole_stream_says(seed):
    """Odd seeds start as a journal from before the running total: their first live pushes'
    outcomes carry none (v1), and are summed where the figures need them."""
    rng = random.Random(seed)
    run_id = f"r-ledger{seed}"
    old = 3 if seed % 2 else 0
    assert traces.state(run_id) is None
    for event in history(rng):
        if old and isinstance(event, TraceSpansPushed):
            old -= 1
            append_next(
                DjangoJournal(), f"traces-{run_id}", [event.model_copy(update={"run_id": run_id})]
            )
        else:
            traces.record(run_id, event)
        whole, book = traces.whole_ledger(run_id), traces.ledger(run_id)
        assert (whole.version, whole.last, whole.batches) == (book.version, book.last, book.batches)
        assert traces.state(run_id) == by_ledger(run_id), event.kind
    pushed = [
        r.event
        for r in DjangoJournal().read(f"traces-{run_id}")
        if isinstance(r.event, TraceSpansPushed)
    ]
    # Each outcome stamped carries the sum of those up to it.
    for n, e in enumerate(pushed):
        if e.live is not None:
            assert e.live == sum(p.count for p in pushed[: n + 1])
