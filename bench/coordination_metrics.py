"""The coordination metrics over many stored runs, against the bill's fold on the same rows.

    seed      --runs runs (10,000) as the dashboard bench seeds them (bench/dashboard_seed.py:
              six repo-fix template runs flown once, stored again under new ids, ~100 events
              each), then the read models rebuilt from the journal (timed).
    fold      for --sample runs picked at random: the run's rows read once, then the metrics
              fold and the bill fold each run over the same records (runtime.folds.run),
              --repeats times; medians per run, and per event.
    read      per run, the API's path: the fold's stored state read and its result computed
              (dashboard.queries.metrics against dashboard.queries.bill), for the same runs.
    all runs  every run's stored metrics state in one query and its result computed, as a
              page across runs would (the metrics page is not built yet), against the bill's.
    rebuild   the runs projector rebuilt from position 0 with every fold, then without the
              metrics fold: what keeping the metrics current costs the projector.

SQLite (a file in a temp dir, WAL), production settings. Run from the worktree:

    PYTHONPATH=. .venv/bin/python bench/coordination_metrics.py [--runs 10000] [--sample 500]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--runs", type=int, default=10_000, help="runs to seed")
PARSER.add_argument("--sample", type=int, default=500, help="runs timed one by one")
PARSER.add_argument("--repeats", type=int, default=5, help="measurements (medians)")
PARSER.add_argument("--seed", type=int, default=1, help="random seed")
PARSER.add_argument("--keep", action="store_true", help="keep the temp dir (database)")
ARGS = PARSER.parse_args()

WORK = Path(tempfile.mkdtemp(prefix="minutes-bench-metrics-"))
os.environ.update(
    {
        "DATABASE_URL": f"sqlite:///{WORK / 'metrics.sqlite3'}",
        "MINUTES_HOME": str(WORK / "home"),
        "MINUTES_DEBUG": "0",
        "MINUTES_SECRET_KEY": "bench-" + uuid.uuid4().hex + uuid.uuid4().hex,
        "MINUTES_SSL_REDIRECT": "0",
        "MINUTES_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "MINUTES_EAGER": "1",  # the templates are flown in-process
    }
)

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from bench.dashboard_seed import seed  # noqa: E402
from dashboard import queries  # noqa: E402
from journal_store import projection  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from journal_store.models import RunState, RunSummary, StoredEvent  # noqa: E402
from runtime import folds  # noqa: E402
from runtime.metrics import Metrics  # noqa: E402
from runtime.views import Bill  # noqa: E402


def median_of(repeats: int, work: Callable[[], Any]) -> float:
    """The median seconds of `repeats` calls of `work`."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def fold_times(run_ids: list[str]) -> dict[str, float]:
    """Per run and per event (µs): each fold over the same records, read once beforehand."""
    journal = DjangoJournal()
    runs = [journal.read_run(r) for r in run_ids]
    events = sum(len(r) for r in runs)
    out = {}
    for fold in (Metrics(), Bill()):
        folds.run(fold, runs[0])  # warm: the first TeamStarted imports the installed teams
        total = median_of(ARGS.repeats, lambda f=fold: [folds.run(f, records) for records in runs])
        out[fold.name] = total
        print(
            f"  {fold.name:<8} {total / len(runs) * 1e6:8.1f} µs per run, "
            f"{total / events * 1e6:6.2f} µs per event ({events / len(runs):.0f} events per run)"
        )
    print(f"  metrics / bill: {out['metrics'] / out['bill']:.2f}")
    return out


def read_times(run_ids: list[str]) -> dict[str, float]:
    """Per run (µs): the stored state read and its result computed, as the API does."""
    out = {}
    for name, read in (("metrics", queries.metrics), ("bill", queries.bill)):
        total = median_of(ARGS.repeats, lambda r=read: [r(run_id) for run_id in run_ids])
        out[name] = total
        print(f"  {name:<8} {total / len(run_ids) * 1e6:8.1f} µs per run")
    print(f"  metrics / bill: {out['metrics'] / out['bill']:.2f}")
    return out


def all_runs() -> dict[str, float]:
    """Every run's stored state in one query, results computed (ms for all)."""
    out = {}
    for fold in (Metrics(), Bill()):

        def work(f: folds.Fold = fold) -> None:
            states = RunState.objects.filter(fold=f.name).values_list("state", flat=True)
            for text in states.iterator(chunk_size=2_000):
                f.result(json.loads(text), folds.Rows())

        total = median_of(ARGS.repeats, work)
        out[fold.name] = total
        count = RunState.objects.filter(fold=fold.name).count()
        print(
            f"  {fold.name:<8} {total * 1e3:8.1f} ms for {count:,} runs "
            f"({total / max(count, 1) * 1e6:.1f} µs per run)"
        )
    print(f"  metrics / bill: {out['metrics'] / out['bill']:.2f}")
    return out


def rebuild_share() -> None:
    """The runs projector's rebuild with and without the metrics fold (seconds, one each)."""
    events = StoredEvent.objects.count()
    timed = {}
    every = projection.RUN_FOLDS
    for label, chosen in (
        ("every fold", every),
        ("without metrics", tuple(f for f in every if f.name != "metrics")),
    ):
        projection.RUN_FOLDS = chosen
        runs = projection.PROJECTORS["runs"]
        assert isinstance(runs, projection.Runs)
        runs.routes.clear()  # the folds each kind goes to, cached
        started = time.perf_counter()
        projection.rebuild(["runs"])
        timed[label] = time.perf_counter() - started
        print(f"  {label:<16} {timed[label]:6.1f} s ({events / timed[label]:,.0f} events/s)")
    projection.RUN_FOLDS = every
    projection.PROJECTORS["runs"].routes.clear()  # type: ignore[attr-defined]
    projection.rebuild(["runs"])
    share = timed["every fold"] / timed["without metrics"] - 1
    print(f"  the metrics fold adds {share:.0%} to the rebuild")


def main() -> None:
    rng = random.Random(ARGS.seed)
    try:
        call_command("migrate", verbosity=0)
        print(f"seeding {ARGS.runs:,} runs on SQLite in {WORK}", flush=True)
        events, seeded, rebuilt, _ = seed(ARGS.runs, rng)
        print(
            f"seeded {events:,} events in {seeded:.0f} s; read models rebuilt in {rebuilt:.0f} s "
            f"({events / rebuilt:,.0f} events/s, every fold including the metrics)"
        )
        run_ids = list(RunSummary.objects.values_list("run_id", flat=True))
        sample = rng.sample(run_ids, min(ARGS.sample, len(run_ids)))
        states = RunState.objects.filter(fold="metrics").values_list("state", flat=True)
        sizes = [len(s) for s in states]
        print(
            f"metrics state per run: median {statistics.median(sizes):.0f} bytes, "
            f"largest {max(sizes):,} bytes"
        )
        print(f"\nfold over a run's records, {len(sample)} runs, median of {ARGS.repeats}:")
        fold_times(sample)
        print(f"\nread from the read model (the API's path), {len(sample)} runs:")
        read_times(sample)
        print(f"\nevery run's stored state at once, median of {ARGS.repeats}:")
        all_runs()
        print("\nthe runs projector rebuilt from position 0:")
        rebuild_share()
    finally:
        if ARGS.keep:
            print(f"kept {WORK}")
        else:
            shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
