"""The count of whole-trace pushes waiting for a worker (traces.waiting), read from its read
model (journal_store/pending_pushes.py): the same as the query over every traces stream it
replaced, through queueing, outcomes, retries, live pushes, imports, rebuilds and concurrent
writers."""

from __future__ import annotations

import io
import random
import threading

import pytest
from django.db import connections

from journal_store import pending_pushes, projection, traces
from journal_store.journal import DjangoJournal
from journal_store.models import Checkpoint, PendingPush
from journal_store.transfer import import_journal
from runtime import flat
from runtime.events import (
    Event,
    RunStarted,
    TracePushed,
    TracePushFailed,
    TracePushQueued,
    TraceSpansClaimed,
    TraceSpansPushed,
    TraceSpansPushFailed,
)
from runtime.journal import append_next
from tests.journal_store.conftest import on_every_backend

URL = "http://collector:4318"


def by_scan(alias: str) -> int:
    """The count as it was read before the read model (the baseline of bench/pending_pushes.py):
    every traces stream's last whole-trace push, looked up by a subquery per event."""
    whole = (TracePushQueued.kind, TracePushed.kind, TracePushFailed.kind)
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*) FROM journal_event e WHERE e.stream LIKE %s AND e.kind = %s "
            "AND e.version = (SELECT MAX(version) FROM journal_event WHERE stream = e.stream "
            "AND kind IN (%s, %s, %s))",
            ["traces-%", TracePushQueued.kind, *whole],
        )
        return int(cursor.fetchone()[0])


def put(alias: str, run_id: str, *events: Event, stream: str | None = None) -> None:
    append_next(
        DjangoJournal(alias),
        stream or f"traces-{run_id}",
        [e.model_copy(update={"run_id": run_id}) for e in events],
    )


def queued(by: str | None = None) -> TracePushQueued:
    return TracePushQueued(endpoint=URL, by=by)


def pushed() -> TracePushed:
    return TracePushed(endpoint=URL, spans=3, bytes=30, attempts=1)


def failed(attempts: int = 4) -> TracePushFailed:
    return TracePushFailed(endpoint=URL, error="HTTP 503", attempts=attempts)


def rows(alias: str) -> list[tuple[str, str, int]]:
    """The read model's rows once caught up (a count reads what came after it, not applies)."""
    projection.catch_up([pending_pushes.NAME], using=alias)
    return list(
        PendingPush.objects.using(alias)
        .order_by("stream")
        .values_list("stream", "run_id", "position")
    )


@on_every_backend()
def test_a_push_waits_from_its_queueing_to_its_outcome(alias):
    assert traces.waiting(alias) == 0
    put(alias, "r-a", queued())
    put(alias, "r-b", queued())
    put(alias, "r-c", queued())
    assert traces.waiting(alias) == 3
    put(alias, "r-a", pushed())
    put(alias, "r-b", failed())
    assert traces.waiting(alias) == 1
    put(alias, "r-b", queued(by="alice"))  # retried from the run page
    assert traces.waiting(alias) == 2
    put(alias, "r-b", pushed())
    # Refused at the queue's bound: a failure with no queueing before it waits for nothing.
    put(alias, "r-d", failed(attempts=0))
    assert traces.waiting(alias) == 1 == by_scan(alias)
    [(stream, run_id, _)] = rows(alias)
    assert (stream, run_id) == ("traces-r-c", "r-c")


@on_every_backend()
def test_live_pushes_on_the_stream_neither_open_nor_close_a_wait(alias):
    claim = TraceSpansClaimed(endpoint=URL, first=0, count=2)
    put(
        alias,
        "r-live",
        claim,
        TraceSpansPushed(endpoint=URL, first=0, count=2, bytes=9, attempts=1),
    )
    assert traces.waiting(alias) == 0  # a run going on, its spans pushed live
    put(alias, "r-live", queued())
    # A live push's outcome journalled after the run's end queued the whole push.
    put(
        alias, "r-live", TraceSpansPushFailed(endpoint=URL, first=2, count=1, error="x", attempts=1)
    )
    assert traces.waiting(alias) == 1 == by_scan(alias)


@on_every_backend()
def test_a_push_whose_worker_died_waits_until_an_outcome_is_journalled(alias):
    put(alias, "r-died", queued())  # its worker died: nothing more on the stream
    assert traces.waiting(alias) == 1
    projection.rebuild([pending_pushes.NAME], using=alias)
    assert traces.waiting(alias) == 1  # the journal still says it waits
    put(alias, "r-died", failed(attempts=0))  # services.traces.out_of_time, or a person
    assert traces.waiting(alias) == 0


@on_every_backend()
def test_pushes_on_other_streams_are_not_counted(alias):
    # Not where pushes are kept (runtime/streams.py): the query it replaced left them out too.
    put(alias, "r-odd", queued(), stream="run-r-odd")
    assert traces.waiting(alias) == 0 == by_scan(alias)


@on_every_backend()
def test_the_count_is_the_scan_s_at_every_step_of_a_busy_history(alias):
    """Random pushes, outcomes, retries and live pushes on twelve runs, in small batches,
    counted after each or after several, and now and then the read model caught up: it counts
    what the scan counts, however far behind its checkpoint the pushes go."""
    rng = random.Random(20261206)
    kinds = [queued, pushed, failed, lambda: TraceSpansClaimed(endpoint=URL, first=0, count=1)]
    for step in range(120):
        run_id = f"r-{rng.randrange(12):02d}"
        put(alias, run_id, *(rng.choice(kinds)() for _ in range(rng.randint(1, 3))))
        if step % rng.choice((1, 3, 7)) == 0:
            assert traces.waiting(alias) == by_scan(alias), step
        if step % 17 == 0:
            projection.catch_up(using=alias)
    assert traces.waiting(alias) == by_scan(alias)
    kept = rows(alias)
    projection.rebuild(using=alias)
    assert rows(alias) == kept
    assert traces.waiting(alias) == by_scan(alias)


@on_every_backend()
def test_the_table_is_rebuilt_from_the_journal(alias):
    put(alias, "r-1", queued())
    put(alias, "r-2", queued(), failed(), queued())
    put(alias, "r-3", queued(), pushed())
    assert traces.waiting(alias) == 2
    kept = rows(alias)
    PendingPush.objects.using(alias).all().delete()  # a read model thrown away
    PendingPush.objects.using(alias).create(stream="traces-r-3", run_id="r-3", position=1)
    projection.rebuild([pending_pushes.NAME], using=alias)
    assert rows(alias) == kept
    # And from nothing, as a store migrated to it starts: its checkpoint at 0.
    PendingPush.objects.using(alias).all().delete()
    Checkpoint.objects.using(alias).filter(name=pending_pushes.NAME).delete()
    assert traces.waiting(alias) == 2 and rows(alias) == kept


@on_every_backend()
@pytest.mark.parametrize("caught_up", [True, False])
def test_a_count_writes_nothing_however_far_behind_the_read_model_is(alias, caught_up):
    """A page or a run's end that counts takes no write lock and moves no checkpoint: with the
    read model thousands of positions behind (or never caught up) the count is still the
    scan's, read past its checkpoint, and the read model is where it was."""
    put(alias, "r-1", queued())
    put(alias, "r-2", queued())
    put(alias, "r-3", queued(), pushed())
    if caught_up:
        projection.catch_up([pending_pushes.NAME], using=alias)
    at, _ = pending_pushes.checkpoint(alias)
    kept = list(PendingPush.objects.using(alias).values_list("stream", "position"))
    filler = [RunStarted(run_id="r-busy", agent="coder", task="t") for _ in range(2_500)]
    DjangoJournal(alias).append("run-r-busy", filler, 0)
    put(alias, "r-1", pushed())  # past the filler: the count must read that far
    put(alias, "r-4", queued())

    statements: list[str] = []

    def noted(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connections[alias].execute_wrapper(noted):
        assert traces.waiting(alias) == 2 == by_scan(alias)
    assert statements and all(sql.lstrip().upper().startswith("SELECT") for sql in statements)
    assert pending_pushes.checkpoint(alias)[0] == at
    assert list(PendingPush.objects.using(alias).values_list("stream", "position")) == kept


@on_every_backend()
def test_an_imported_journal_s_pushes_are_not_counted_here(alias):
    """A file written before exports left the traces stream out (journal_store/transfer.py)
    still carries it. Its queued push was counted here, against the bound of waiting pushes,
    with no worker here to send it: the run's pushes are left out, and nothing is counted,
    whether the run keeps its id or is given another."""

    def line(event: Event, stream: str, version: int) -> str:
        return flat.dumps(event.model_copy(update={"run_id": "r-imp"}), stream, version) + "\n"

    text = "".join(
        [
            line(RunStarted(agent="coder", task="t"), "run-r-imp", 1),
            line(queued(), "traces-r-imp", 1),
            line(failed(), "traces-r-imp", 2),
            line(queued(by="ann"), "traces-r-imp", 3),
        ]
    )
    for run_id in (None, "r-imp2"):
        report = import_journal(io.BytesIO(text.encode()), run_id=run_id, using=alias)
        assert report.added == 1 and report.left_out == {"traces-r-imp": 3}
        assert traces.waiting(alias) == 0 == by_scan(alias) and rows(alias) == []


@pytest.mark.slow
@on_every_backend(transaction=True)
def test_concurrent_run_ends_workers_and_catch_ups_leave_the_count_right(alias):
    """Run ends queueing and counting, workers journalling outcomes, and catch-ups moving the
    read model, at once: each run's end counts its own push, however the read model moved
    meanwhile, and the count at the end is the scan's."""
    runs = [f"r-c{n:02d}" for n in range(12)]
    barrier = threading.Barrier(len(runs) + 2)
    errors: list[BaseException] = []

    def run_end(run_id: str, n: int) -> None:
        try:
            barrier.wait()
            for _ in range(3):
                put(alias, run_id, queued())
                assert 1 <= traces.waiting(alias) <= len(runs), run_id  # its own, at least
                # Two in three are sent, one of them failing; a third waits on.
                put(alias, run_id, pushed() if n % 3 == 1 else failed())
            if n % 3 == 0:
                put(alias, run_id, queued())
            traces.waiting(alias)
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)
        finally:
            connections.close_all()

    def catching_up() -> None:
        try:
            barrier.wait()
            for _ in range(10):
                projection.catch_up(using=alias, batch=3)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run_end, args=(r, n)) for n, r in enumerate(runs)]
    threads += [threading.Thread(target=catching_up) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert traces.waiting(alias) == 4 == by_scan(alias)
    assert [s for s, _, _ in rows(alias)] == [f"traces-{r}" for r in runs[::3]]
