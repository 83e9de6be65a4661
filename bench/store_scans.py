"""What a run's reads by its streams' names cost in a store of other runs: one run of a fixed
size (its journal of 30 events, two specialists' streams of 10, a conflict it parked and its
decision, a lease of its own), in a store holding --sizes other events (10 a run: 4 in a
specialist's stream, 3 in the run's journal, a conflict parked and decided, a claim).

    read_prefix       the run's specialists' streams (read_prefix("worker-<run>-"))
    run_records       what a replay, a refill and start_run read of the run (its journal and
                      its specialists'); a replay's count of the specialists' events is the
                      read_prefix above
    traced_records    what a trace reads (runtime/flight.py): run_records, the control
                      stream and the conflicts the run parked
    figured_records   what the run's figures are folded from (a comparison's side)

Each beside the same read as it was before 2026-12-06 ("(before)": the names matched by a
LIKE, a scan of the table; every conflict's stream read for a trace, the whole journal for
the figures), in the same process, with the journal rows each turns into records. The other
runs' events are added as the sizes go up (a store that grows); at each size the reads are
timed in turns, round after round (--repeats), and the medians given, with the ratio of the
largest size's figure to the smallest's. Production settings (DEBUG off); SQLite by default
(WAL, synchronous=FULL, a file in a temp dir), --postgres for a private PostgreSQL cluster
with fsync on, VACUUM ANALYZEd after each load.

    PYTHONPATH=. .venv/bin/python bench/store_scans.py [--sizes 100,20000] [--postgres]
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import (  # noqa: E402
    caption,
    head,
    like_prefix,
    line,
    parser,
    rows_read,
    settle,
    sizes_of,
)

ARGS = parser(__doc__, "100,20000", "other events, ascending").parse_args()
SIZES = sorted(sizes_of(ARGS.sizes))
setup("store-scans", ARGS.postgres)

from django.core.management import call_command  # noqa: E402

from journal_store.journal import DjangoJournal  # noqa: E402
from runtime import flight, streams  # noqa: E402
from runtime.events import (  # noqa: E402
    ClaimAsserted,
    ConflictParked,
    ConflictResolved,
    Event,
    LeaseGranted,
    TeamStarted,
    ToolDispatched,
)
from runtime.journal import Batch, Recorded  # noqa: E402
from runtime.otel.waits import waits_on  # noqa: E402

RUN = "r-measured"


def call(run: str) -> ToolDispatched:
    return ToolDispatched(run_id=run, tool="t", args={})


def conflict(run: str) -> list[Event]:
    parked = ConflictParked(
        run_id=run,
        conflict_id=f"c-{run}",
        subject=f"order:{run}",
        predicate="status",
        conflict_type="value",
        claims=[],
    )
    return [
        parked,
        ConflictResolved(run_id=run, conflict_id=f"c-{run}", by="p", reason="r", choice="c"),
    ]


def seed_run(journal: DjangoJournal) -> None:
    started = TeamStarted(run_id=RUN, team="repo-fix", scenario="s", task="t")
    lease = LeaseGranted(run_id=RUN, resource=RUN, holder="h", expires=1.0)
    journal.append_batches(
        [
            (streams.journal(RUN), [started, *[call(RUN) for _ in range(29)]], 0),
            (streams.worker(RUN, "S1", "w1"), [call(RUN) for _ in range(10)], 0),
            (streams.worker(RUN, "S1", "w2"), [call(RUN) for _ in range(10)], 0),
            (f"conflict-c-{RUN}", conflict(RUN), 0),
            (streams.driver_lease(RUN), [lease], 0),
        ]
    )


def grow_others(journal: DjangoJournal, have: int, want: int) -> None:
    """Other runs, 10 events a run, up to `want` events."""
    runs = [f"r-other{n:06d}" for n in range(have // 10, want // 10)]
    for start in range(0, len(runs), 200):
        batches: list[Batch] = []
        for run in runs[start : start + 200]:
            claim = ClaimAsserted(
                run_id=run,
                claim_id=f"cl-{run}",
                subject=f"order:{run}",
                predicate="status",
                value="v",
                based_on=0,
                source="model",
                by="a",
            )
            batches += [
                (streams.worker(run, "S1", "w1"), [call(run) for _ in range(4)], 0),
                (streams.journal(run), [call(run) for _ in range(3)], 0),
                (f"conflict-c-{run}", conflict(run), 0),
                (f"claims-order:{run}", [claim], 0),
            ]
        journal.append_batches(batches)


def run_records_before(journal: DjangoJournal) -> list[Recorded]:
    own = journal.read(streams.journal(RUN))
    return sorted([*own, *like_prefix(journal, f"worker-{RUN}-")], key=lambda r: r.position)


def traced_before(journal: DjangoJournal) -> list[Recorded]:
    """traced_records as it was: every conflict's stream, and the run's records by LIKE."""
    control = journal.read(streams.control(RUN))
    waits = [r for r in [*control, *like_prefix(journal, "conflict-")] if waits_on(RUN, r)]
    return sorted([*run_records_before(journal), *waits], key=lambda r: r.position)


def figured_before(journal: DjangoJournal) -> list[Recorded]:
    """figured_records as it was: the whole journal, picked out."""
    own, workers = streams.journal(RUN), f"worker-{RUN}-"
    return [
        r
        for r in journal.read_all()
        if r.event.run_id == RUN
        or (
            not r.event.run_id
            and (
                r.stream == own or r.stream.startswith(workers) or streams.owners(r.stream) == [RUN]
            )
        )
    ]


def main() -> None:
    call_command("migrate", verbosity=0)
    journal = DjangoJournal()
    seed_run(journal)
    reads: dict[str, Callable[[], list[Recorded]]] = {
        "read_prefix": lambda: journal.read_prefix(f"worker-{RUN}-"),
        "read_prefix (before)": lambda: like_prefix(journal, f"worker-{RUN}-"),
        "run_records": lambda: flight.run_records(journal, RUN),
        "run_records (before)": lambda: run_records_before(journal),
        "traced_records": lambda: flight.traced_records(journal, RUN),
        "traced_records (before)": lambda: traced_before(journal),
        "figured_records": lambda: flight.figured_records(journal, RUN),
        "figured_records (before)": lambda: figured_before(journal),
    }
    expected = {"read_prefix": 20, "run_records": 50, "traced_records": 52, "figured_records": 53}
    medians: dict[str, dict[int, float]] = {name: {} for name in reads}
    rows: dict[str, dict[int, int]] = {name: {} for name in reads}
    have = 0
    for size in SIZES:
        started = time.perf_counter()
        grow_others(journal, have, size)
        have = size
        settle(checkpoint=True)
        print(f"grew to {size:,} other events in {time.perf_counter() - started:.1f} s")
        for name, read in reads.items():  # the same records, before and now
            found = [(r.stream, r.version) for r in read()]
            assert len(found) == expected[name.removesuffix(" (before)")], (name, len(found))
            assert found == [(r.stream, r.version) for r in reads[name.split(" ")[0]]()], name
            rows[name][size] = rows_read(read)
        times: dict[str, list[float]] = {name: [] for name in reads}
        for _ in range(ARGS.repeats):  # in turns: a round times each read once
            for name, read in reads.items():
                # The garbage of a read before, made of a whole store's records, is collected
                # here, not during the next read timed.
                gc.collect()
                began = time.perf_counter()
                read()
                times[name].append((time.perf_counter() - began) * 1000)
        for name in reads:
            medians[name][size] = statistics.median(times[name])
    caption(ARGS.repeats)
    head("other events", SIZES, 28, rows_width=20)
    for name in reads:
        line(name, medians[name], rows[name], 28, rows_width=20)


if __name__ == "__main__":
    main()
