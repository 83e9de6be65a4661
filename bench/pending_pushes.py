"""What counting the trace pushes that wait for a worker costs as pushed runs pile up.

`journal_store.traces.waiting` runs at every run's end (services/traces.py) to bound the queue
of pushes. Each --sizes is a store of its own holding that many runs, each with --events
events of its own and a traces stream with its push's history: most queued then pushed, one in
ten failed, one in ten failed and queued again then pushed, one in five with live pushes before
its end, and --waiting runs whose push is queued and not sent (the same at every size). Then,
in rounds, the sizes taken in turns:

    before              the count as it was before 2026-12-05 (kept here): a correlated
                        subquery over every traces stream ever written, for its last push
    after, queued       traces.waiting (journal_store/pending_pushes.py) just after a new
                        run's end queued its push: the read model's rows, and the pushes
                        journalled since its checkpoint (this one)
    after, its outcome  the same just after that push's outcome was journalled (two since)
    after, caught up    the same once the read model was caught up, as the next step's
                        catch-up does (none since)

and last, in --far-rounds rounds, as it adds to the journal:

    after, 2,001 behind  traces.waiting when BEHIND events of another run were journalled
                         since the read model's checkpoint: it reads their pushes (none) past
                         the checkpoint and writes nothing (until 2026-12-06 it caught the
                         read model up first, a write)

Every figure's count is checked against the one it should be. Medians in ms, and each
size's ratio to the first size's, measured in the same run. Production settings (DEBUG off);
SQLite by default (WAL, synchronous=FULL, a file a size in a temp dir), --postgres for a
private PostgreSQL cluster with fsync on (a database a size), ANALYZEd after the load.

    PYTHONPATH=. .venv/bin/python bench/pending_pushes.py [--sizes 200,2000,20000] [--postgres]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import analyze, parser, sizes_of, stores  # noqa: E402

PARSER = parser(__doc__, "200,2000,20000", "runs a store", repeats=None)
PARSER.add_argument("--events", type=int, default=20, help="each run's own events")
PARSER.add_argument("--waiting", type=int, default=10, help="pushes queued and not sent")
PARSER.add_argument("--rounds", type=int, default=31, help="rounds (medians)")
PARSER.add_argument("--far-rounds", type=int, default=7, help="rounds of the last line")
ARGS = PARSER.parse_args()
SIZES = sizes_of(ARGS.sizes)
STORE = setup("pending-pushes", ARGS.postgres)

from django.db import connections  # noqa: E402

from journal_store import pending_pushes, projection, traces  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from runtime.events import (  # noqa: E402
    Event,
    RunStarted,
    TracePushed,
    TracePushFailed,
    TracePushQueued,
    TraceSpansClaimed,
    TraceSpansPushed,
)
from runtime.journal import Batch, append_next  # noqa: E402

URL = "http://collector:4318"
WHOLE = (TracePushQueued.kind, TracePushed.kind, TracePushFailed.kind)


def before(alias: str) -> int:
    """journal_store.traces.waiting as it was before the read model (commit 7851c3c)."""
    kinds = ", ".join(["%s"] * len(WHOLE))
    sql = (
        "SELECT COUNT(*) FROM journal_event e WHERE e.stream LIKE %s AND e.kind = %s "
        "AND e.version = (SELECT MAX(version) FROM journal_event WHERE stream = e.stream "
        f"AND kind IN ({kinds}))"
    )
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, ["traces-%", TracePushQueued.kind, *WHOLE])
        (count,) = cursor.fetchone()
    return int(count)


def pushes(n: int, run_id: str) -> list[Event]:
    """The run's traces stream (see the module's doc); None of --waiting's outcomes."""
    queued = TracePushQueued(run_id=run_id, endpoint=URL)
    sent = TracePushed(run_id=run_id, endpoint=URL, spans=40, bytes=4000, attempts=1)
    failed = TracePushFailed(run_id=run_id, endpoint=URL, error="HTTP 503", attempts=4)
    live: list[Event] = [
        TraceSpansClaimed(run_id=run_id, endpoint=URL, first=0, count=8),
        TraceSpansPushed(run_id=run_id, endpoint=URL, first=0, count=8, bytes=800, attempts=1),
    ]
    if n < ARGS.waiting:
        return [queued]
    if n % 10 == 1:
        return [queued, failed]
    if n % 10 == 2:
        return [queued, failed, TracePushQueued(run_id=run_id, endpoint=URL, by="ann"), sent]
    return [*(live if n % 5 == 4 else []), queued, sent]


def seed(alias: str, size: int) -> None:
    journal = DjangoJournal(alias)
    for start in range(0, size, 50):
        batches: list[Batch] = []
        for n in range(start, min(size, start + 50)):
            run_id = f"r-{n:06d}"
            own = [RunStarted(run_id=run_id, agent="coder", task="t") for _ in range(ARGS.events)]
            batches += [(f"run-{run_id}", own, 0), (f"traces-{run_id}", pushes(n, run_id), 0)]
        journal.append_batches(batches)
    projection.catch_up([pending_pushes.NAME], using=alias)
    analyze(alias)


CASES = ("before", "after, queued", "after, its outcome", "after, caught up")
BEHIND = 2_001  # events since the checkpoint in the last case (past the old catch-up's 2,000)
FAR_CASE = f"after, {BEHIND:,} behind"


def main() -> None:
    aliases = stores(STORE, SIZES)
    for size in SIZES:
        started = time.perf_counter()
        seed(aliases[size], size)
        assert before(aliases[size]) == traces.waiting(aliases[size]) == ARGS.waiting
        events = DjangoJournal(aliases[size]).last_position()
        print(f"seeded {size:,} runs ({events:,} events) in {time.perf_counter() - started:.1f} s")
    times: dict[str, dict[int, list[float]]] = {
        case: {size: [] for size in SIZES} for case in (*CASES, FAR_CASE)
    }

    def timed(case: str, size: int, work: Callable[[], int], expected: int) -> None:
        started = time.perf_counter()
        found = work()
        times[case][size].append((time.perf_counter() - started) * 1000)
        assert found == expected, (case, size, found, expected)

    for n in range(ARGS.rounds + 1):  # the first round warms, and is not kept
        for size in SIZES:
            alias = aliases[size]
            journal = DjangoJournal(alias)
            run_id, stream = f"r-end{n:04d}", f"traces-r-end{n:04d}"
            timed("before", size, lambda a=alias: before(a), ARGS.waiting)
            append_next(journal, stream, [TracePushQueued(run_id=run_id, endpoint=URL)])
            timed("after, queued", size, lambda a=alias: traces.waiting(a), ARGS.waiting + 1)
            sent = TracePushed(run_id=run_id, endpoint=URL, spans=40, bytes=4000, attempts=1)
            append_next(journal, stream, [sent])
            timed("after, its outcome", size, lambda a=alias: traces.waiting(a), ARGS.waiting)
            projection.catch_up([pending_pushes.NAME], using=alias)  # as the next step's does
            timed("after, caught up", size, lambda a=alias: traces.waiting(a), ARGS.waiting)
        if n == 0:
            for case in CASES:
                for size in SIZES:
                    times[case][size].clear()
    # Last, as it adds to the journal: the read model caught up, then BEHIND positions behind
    # (nothing caught it up meanwhile): the count reads past its checkpoint.
    for n in range(ARGS.far_rounds):
        for size in SIZES:
            alias = aliases[size]
            run_id = f"r-far{n:04d}"
            projection.catch_up([pending_pushes.NAME], using=alias)  # untimed
            filler: list[Event] = [
                RunStarted(run_id=run_id, agent="coder", task="t") for _ in range(BEHIND)
            ]
            DjangoJournal(alias).append(f"run-{run_id}", filler, 0)
            if connections[alias].vendor == "sqlite":
                # The append's pages out of the WAL now, not in the timed count's reads (the
                # more events the store holds, the more index pages the new events' random ids
                # touched).
                with connections[alias].cursor() as cursor:
                    cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            timed(FAR_CASE, size, lambda a=alias: traces.waiting(a), ARGS.waiting)
    vendor = connections[aliases[SIZES[0]]].vendor
    print(
        f"\n{vendor}, in-process, medians of {ARGS.rounds} rounds ({ARGS.far_rounds} for the "
        f"last line), the sizes in turns; ms, and each size's ratio to {SIZES[0]:,} runs"
    )
    head = f"{SIZES[0]:>10,}" + "".join(f"{size:>10,}{'ratio':>7}" for size in SIZES[1:])
    print(f"{'runs pushed':<22}{head}")
    for case in (*CASES, FAR_CASE):
        medians = {size: statistics.median(times[case][size]) for size in SIZES}
        first = medians[SIZES[0]]
        row = f"{first:>10.3f}" + "".join(
            f"{medians[size]:>10.3f}{medians[size] / first:>7.2f}" for size in SIZES[1:]
        )
        print(f"{case:<22}{row}")


if __name__ == "__main__":
    main()
