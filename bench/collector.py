"""The garbage collector's share of a step: a worker's settled heap against CPython's defaults.

Runs of 100 and 20,000 events are built as bench/long_run.py builds them (the solo team's coder
calling read_file turn after turn, in the database). Then, in turns, --repeats times: with the
collector as CPython starts a process (nothing frozen), and as a worker process settles it once
it has started (runtime/heap.py: what the process holds frozen out of the collector's
searches), one step of each run:

    cold step, full replay   drive_step, one turn a step, nothing kept warm and no loop
                             snapshot: the run's whole history read and replayed. What a repo-fix
                             step costs on a process that has not seen the run.
    cold step, from a snapshot
                             the same as shipped: a snapshot every 5 turns, in the database.
    warm step                the flight parked in this process.

Medians, each setting's figure beside the other's and their ratio, and each setting's ratio of
the 20,000-event figure to the 100-event one. SQLite in a temp dir by default; --postgres for a
private PostgreSQL cluster.

    .venv/bin/python bench/collector.py [--repeats 7] [--sizes 100,20000] [--postgres]
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.long_run import TURN_EVENTS, configure, grow, new_run, register_scenario, sized_parser  # noqa: E402

PARSER = sized_parser(__doc__)


def as_started() -> None:
    """The collector as CPython starts a process: nothing frozen."""
    gc.unfreeze()
    gc.collect()


def settled() -> None:
    """The collector as a worker process leaves it once started."""
    from runtime import heap

    as_started()
    heap.settle()


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    args = PARSER.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    configure(args.postgres)
    from django.conf import settings
    from django.db import connection

    from journal_store.journal import DjangoJournal
    from journal_store.snapshots import DatabaseSnapshots
    from services import steps

    turns = max(sizes) // TURN_EVENTS + 400  # room for every measured step's turn
    register_scenario(turns)
    runs = {}
    for size in sizes:
        runs[size] = new_run(turns)
        grow(runs[size], size)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")

    def step(run_id: str) -> None:
        outcome = steps.drive_step(run_id, "bench")
        assert outcome == "stepped", outcome

    settings.STEP_TURNS = 1
    shipped = settings.SNAPSHOT_TURNS

    def full(run_id: str) -> float:
        settings.WARM_RUNS, settings.SNAPSHOT_TURNS = 0, 0
        return timed(lambda: step(run_id))

    def snapshot(run_id: str) -> float:
        settings.WARM_RUNS, settings.SNAPSHOT_TURNS = 0, shipped
        stream = f"run-{run_id}"
        for _ in range(2 * shipped + 1):  # step until the latest snapshot is at the last turn
            kept = DatabaseSnapshots().load(stream)
            if kept is not None and DjangoJournal().version(stream) - kept.version <= TURN_EVENTS:
                break
            step(run_id)
        return timed(lambda: step(run_id))

    def warm(run_id: str) -> float:
        settings.WARM_RUNS, settings.SNAPSHOT_TURNS = 4, shipped
        step(run_id)  # the first step of the run in this setting parks its flight
        figure = timed(lambda: step(run_id))
        steps.WARM.clear()
        return figure

    kinds: dict[str, Callable[[str], float]] = {
        "cold step, full replay": full,
        "cold step, from a snapshot": snapshot,
        "warm step": warm,
    }
    settings_ = {"CPython's defaults": as_started, "settled (workers)": settled}
    times: dict[tuple[str, str, int], list[float]] = {}
    for _ in range(args.repeats):
        for name, setup in settings_.items():
            setup()
            for kind, measure in kinds.items():
                for size, run_id in runs.items():
                    times.setdefault((kind, name, size), []).append(measure(run_id))
    as_started()
    first, last = sizes[0], sizes[-1]
    print(f"database: {connection.vendor}; medians of {args.repeats}; ms")
    print(f"{'':<28}{'events':>8}{'defaults':>12}{'settled':>12}{'settled/defaults':>18}")
    for kind in kinds:
        for size in sizes:
            base, ours = (statistics.median(times[(kind, n, size)]) for n in settings_)
            print(f"{kind:<28}{size:>8,}{base:>12.1f}{ours:>12.1f}{ours / base:>18.2f}")
        growth = [
            statistics.median(times[(kind, n, last)]) / statistics.median(times[(kind, n, first)])
            for n in settings_
        ]
        print(f"{'  ' + str(last) + ' / ' + str(first):<36}{growth[0]:>12.2f}{growth[1]:>12.2f}")


if __name__ == "__main__":
    main()
