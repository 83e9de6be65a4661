"""A cold step of a long repo-fix run: replaying the whole run, against resuming from its loop's
snapshot (which now carries the state of the loop's callbacks: its mail, its reply deadline,
the work registry).

One repo-fix run per size is built for real, as bench/long_run.py builds the solo team's: the
orchestrator plans, then the coder, asked to fix T1, reads the parser turn after turn (five
events a turn) in one loop, flown in one session into the database (real git workspace). Then
in turns, --repeats times, at each size, one step (`drive_step`, one turn, nothing kept warm),
on a heap settled as a worker's is (runtime/heap.py):

    full replay      MINUTES_SNAPSHOT_TURNS=0: the run's whole history read and replayed, which
                     is what every cold step of a repo-fix run cost before its loops kept
                     snapshots.
    from a snapshot  as shipped (a snapshot every 5 turns, in the database): the events before
                     the coder's loop and after its latest snapshot read, and only those
                     replayed. Each measured step is 1 to 5 turns past the latest snapshot.
    warm step        the run's flight parked in this process: one live turn, nothing read or
                     replayed. What grows here grows with every turn of a long reply (the
                     coder's deadline is checked at the top of each).

With --memory: the memory a flight parked in this process holds (tracemalloc, after a
collection) once a cold step parks it, having replayed the whole run or resumed from the
snapshot, and once it has gone on, warm, for 500 more turns (five steps of 100).

Medians (ms), each with the ratio of the largest run's figure to the smallest's, and the ratio
of the snapshot's figure to the full replay's at each size. SQLite in a temp dir by default;
--postgres for a private PostgreSQL cluster.

    .venv/bin/python bench/repo_fix_steps.py [--sizes 100,20000] [--repeats 7] [--postgres]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.long_run import TURN_EVENTS, configure, grow, sized_parser  # noqa: E402

PARSER = sized_parser(__doc__)
PARSER.add_argument(
    "--kinds", default="full replay,from a snapshot,warm step", help="which steps to time"
)
PARSER.add_argument(
    "--memory", action="store_true", help="what a parked flight holds, not how long a step takes"
)

SCENARIO = "bench-long-coder"


def register_scenario(turns: int) -> None:
    """A plan, then a coder that reads a file `turns` times before it reports."""
    from runtime import flight
    from runtime.model import call
    from runtime.team import Scenario
    from teams.repo_fix import scenarios

    # Two files in turn: the team's loop breaker stops three identical calls in a row.
    files = (scenarios.PARSER, scenarios.PARSE_TESTS)
    script = [call("read_file", 50, path=files[i % 2]) for i in range(turns)]
    flight.team_named("repo-fix").scenarios[SCENARIO] = Scenario(
        name=SCENARIO,
        description="The benchmark's long repo-fix run: one coder loop of read_file turns.",
        task="Fix the parser.",
        settings={"template": "parse-empty"},
        scripts={
            "orchestrator": [scenarios.PARSE_PLAN],
            "coder": [*script, call("done", 10, summary="read it")],
            "reviewer": scenarios.PARSE_REVIEWER,
            "tester": scenarios.TESTER,
        },
    )


def main() -> None:
    args = PARSER.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    configure(args.postgres)
    from django.conf import settings
    from django.db import connection

    from journal_store.journal import DjangoJournal
    from journal_store.snapshots import DatabaseSnapshots
    from runtime import heap
    from services import runs, steps

    # room for every measured step's turn (the memory figures go on 500 turns at each size)
    turns = max(sizes) // TURN_EVENTS + (800 if args.memory else 400)
    register_scenario(turns)
    built: dict[int, str] = {}
    for size in sizes:
        built[size] = runs.start_run(
            "repo-fix", SCENARIO, by="bench", max_turns=turns, allowance=10**9
        )
        grow(built[size], size)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    heap.settle()
    settings.STEP_TURNS, settings.WARM_RUNS = 1, 0
    shipped = settings.SNAPSHOT_TURNS

    def step(run_id: str) -> float:
        started = time.perf_counter()
        outcome = steps.drive_step(run_id, "bench")
        elapsed = (time.perf_counter() - started) * 1000
        assert outcome == "stepped", outcome
        return elapsed

    def full(run_id: str) -> float:
        settings.SNAPSHOT_TURNS = 0
        return step(run_id)

    def snapshot(run_id: str) -> float:
        settings.SNAPSHOT_TURNS = shipped
        stream = f"run-{run_id}"
        for _ in range(2 * shipped + 1):  # until a snapshot stands within 5 turns of the end
            kept = DatabaseSnapshots().load(stream)
            if kept is not None and DjangoJournal().version(stream) - kept.version <= (
                shipped * TURN_EVENTS
            ):
                break
            step(run_id)
        assert DatabaseSnapshots().load(stream) is not None, "the coder's loop kept no snapshot"
        return step(run_id)

    def warm(run_id: str) -> float:
        settings.SNAPSHOT_TURNS, settings.WARM_RUNS = shipped, 4
        step(run_id)  # the first step this process drives of the run parks its flight
        figure = step(run_id)
        steps.WARM.clear()
        settings.WARM_RUNS = 0
        return figure

    if args.memory:
        memory(built, shipped)
        return

    every = {"full replay": full, "from a snapshot": snapshot, "warm step": warm}
    kinds = {k: every[k] for k in args.kinds.split(",")}
    times: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.repeats):
        for kind, measure in kinds.items():
            for size, run_id in built.items():
                times.setdefault((kind, size), []).append(measure(run_id))
    medians = {key: statistics.median(values) for key, values in times.items()}
    first, last = sizes[0], sizes[-1]
    print(f"database: {connection.vendor}; cold repo-fix steps; medians of {args.repeats}; ms")
    both = "full replay" in kinds and "from a snapshot" in kinds
    print(f"{'events':>8}" + "".join(f"{k:>18}" for k in kinds) + " snapshot/full" * both)
    for size in sizes:
        row = [medians[(k, size)] for k in kinds]
        ratio = medians[("from a snapshot", size)] / medians[("full replay", size)] if both else 0
        print(f"{size:>8,}" + "".join(f"{v:>18.1f}" for v in row) + f"{ratio:>14.3f}" * both)
    growth = [medians[(k, last)] / medians[(k, first)] for k in kinds]
    print(f"{str(last) + ' / ' + str(first):>8}" + "".join(f"{g:>18.2f}" for g in growth))


def memory(built: dict[int, str], shipped: int) -> None:
    """MB held by a parked flight, by how it started, at each size."""
    import gc
    import tracemalloc

    from django.conf import settings

    from services import steps

    def held(run_id: str, snapshots: int, live_steps: int) -> float:
        settings.SNAPSHOT_TURNS, settings.WARM_RUNS = snapshots, 4
        steps.WARM.clear()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        settings.STEP_TURNS = 1
        steps.drive_step(run_id, "bench")  # cold: the flight starts and parks
        settings.STEP_TURNS = 100
        for _ in range(live_steps):
            steps.drive_step(run_id, "bench")  # warm
        gc.collect()
        figure = (tracemalloc.get_traced_memory()[0] - before) / 1e6
        steps.WARM.clear()
        return figure

    settings.DEBUG = False  # no query log growing beside the flight
    tracemalloc.start()
    print("memory a parked flight holds, MB")
    print(f"{'events':>8}{'full replay':>14}{'from a snapshot':>18}{'+500 warm turns':>18}")
    for size, run_id in built.items():
        full = held(run_id, 0, 0)
        snap = held(run_id, shipped, 0)
        warm = held(run_id, shipped, 5)
        print(f"{size:>8,}{full:>14.1f}{snap:>18.1f}{warm:>18.1f}")


if __name__ == "__main__":
    main()
