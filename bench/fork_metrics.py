"""The metrics across runs (/metrics, /api/metrics) with forks among the runs, beside the same
number of runs that are no forks, measured in the same process one after the other.

    plain     --base runs on 60 days, plus as many runs again as the case has forks, none a
              fork: the baseline (the rollup's sums, and no add-back to work out).
    same day  the same --base runs, plus --forks forks of them, each made the day its parent
              started (a day's figures hold both: nothing to add back).
    forks     the same, each fork made 1 to 14 days after its parent started (so each day's
              and week's figures add back what its forks copied).
    chains    the same --base runs, plus --forks forks in chains of --depth (a fork of a fork
              of a fork...), each a day after the one above it, each knowing the chain above
              its parent (`lineage`), as forks of forks do.

Each case is the runs read model's rows and the rollup built from them (synthetic figures, as
tests/dashboard/test_metrics_fork_past_counted_once.py makes them): the page reads nothing
else. Timed, in-process (django.test.Client, signed in): the page and the API with no filter
and with a 7-day window, and `services.metrics.across` alone; the median of --repeats, its
queries, and the ratio to the plain case of the same size.

SQLite (a file in a temp dir), production settings. Run from the worktree:

    PYTHONPATH=. .venv/bin/python bench/fork_metrics.py [--base 200] [--forks 10 1000]
        [--depth 10] [--repeats 9]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--base", type=int, default=200, help="runs that are no forks")
PARSER.add_argument("--forks", type=int, nargs="+", default=[10, 1000], help="forks per case")
PARSER.add_argument("--depth", type=int, default=10, help="forks per chain (chains)")
PARSER.add_argument("--repeats", type=int, default=9, help="measurements (medians)")
PARSER.add_argument("--seed", type=int, default=1, help="random seed")
ARGS = PARSER.parse_args()

WORK = setup("forks", sqlite="forks.sqlite3").work

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from journal_store import metrics_days  # noqa: E402
from journal_store.models import MetricsDay, RunSummary  # noqa: E402
from runtime.metric_sums import SUMMED  # noqa: E402
from services.metrics import MetricsFilter, across  # noqa: E402

CASES = ("plain", "same day", "forks", "chains")
FIRST = date(2026, 9, 1)
DAYS = 60
WINDOW = {
    "since": (FIRST + timedelta(20)).isoformat(),
    "until": (FIRST + timedelta(26)).isoformat(),
}


def row(run_id: str, parent: str, day: date, tokens: int, copied: int) -> RunSummary:
    return RunSummary(
        run_id=run_id,
        parent_id=parent,
        team="repo-fix",
        scenario="first-flight",
        model="scripted",
        status="finished",
        stage="complete",
        started_on=day,
        verified=len(run_id) % 2 == 0,
        tokens=tokens,
        coord_tokens=tokens // 2,
        work_tokens=tokens - tokens // 2,
        cost=tokens / 1000,
        inherited_tokens=copied,
        inherited_coord_tokens=copied // 2,
        inherited_work_tokens=copied - copied // 2,
        inherited_cost=copied / 1000 if parent else None,
        **{name: tokens // 10 for name in SUMMED if name != "conflict_wait"},
        conflict_latency=1.0,
        copied_figures={name: copied // 10 for name in SUMMED} if parent else {},
    )


def seed(case: str, forks: int, rng: random.Random) -> None:
    """The read model's rows of a case, and the rollup from them."""
    RunSummary.objects.all().delete()
    MetricsDay.objects.all().delete()
    rows = [
        row(f"b-{i}", "", FIRST + timedelta(rng.randrange(DAYS - 15)), 1000, 0)
        for i in range(ARGS.base)
    ]
    if case == "plain":
        rows += [
            row(f"p-{i}", "", FIRST + timedelta(rng.randrange(DAYS)), 1000, 0) for i in range(forks)
        ]
    elif case in ("same day", "forks"):
        for i in range(forks):
            parent = rng.choice(rows[: ARGS.base])
            later = 0 if case == "same day" else rng.randrange(1, 15)
            day = parent.started_on + timedelta(later)
            rows.append(row(f"f-{i}", parent.run_id, day, 1400, rng.randrange(100, 1000)))
    else:  # chains: each fork a day after the run above it, copying part of it
        made = 0
        while made < forks:
            above = rng.choice(rows[: ARGS.base])
            chain: list[dict[str, Any]] = []
            for _ in range(min(ARGS.depth, forks - made)):
                copied = rng.randrange(above.tokens // 2, above.tokens)
                fork = row(f"c-{made}", above.run_id, above.started_on + timedelta(1), 0, copied)
                fork.tokens = copied + 400
                fork.lineage = list(chain)
                rows.append(fork)
                chain.append(
                    {
                        "run": fork.run_id,
                        "parent": above.run_id,
                        "tokens": copied,
                        "coord_tokens": copied // 2,
                        "work_tokens": copied - copied // 2,
                        "figures": fork.copied_figures,
                    }
                )
                above, made = fork, made + 1
    RunSummary.objects.bulk_create(rows, batch_size=1000)
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)


def timed(work: Callable[[], Any]) -> tuple[float, int]:
    """The median ms of --repeats calls of `work`, and the queries one call makes."""
    work()  # warm
    queries = []
    with connection.execute_wrapper(lambda execute, *args: queries.append(1) or execute(*args)):
        work()
    times = []
    for _ in range(ARGS.repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, len(queries)


def measure(client: Client) -> dict[str, tuple[float, int]]:
    def get(path: str, params: dict[str, str]) -> Callable[[], Any]:
        def call() -> None:
            response = client.get(path, params)
            assert response.status_code == 200, (path, response.status_code)

        return call

    window = MetricsFilter.parse(WINDOW)
    return {
        "page /metrics": timed(get("/metrics", {})),
        "page, 7 days": timed(get("/metrics", WINDOW)),
        "API /api/metrics": timed(get("/api/metrics", {})),
        "API, 7 days": timed(get("/api/metrics", WINDOW)),
        "across() alone": timed(lambda: across(MetricsFilter())),
        "across(), 7 days": timed(lambda: across(window)),
    }


def main() -> None:
    rng = random.Random(ARGS.seed)
    try:
        call_command("migrate", verbosity=0)
        user = get_user_model().objects.create_user("bench", password=uuid.uuid4().hex)
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(user)
        print(
            f"SQLite in {WORK}; {ARGS.base} runs that are no forks on {DAYS} days, plus the "
            f"case's runs; median of {ARGS.repeats}, ms (queries)"
        )
        for forks in ARGS.forks:
            found = {}
            for case in CASES:
                seed(case, forks, rng)
                found[case] = measure(client)
            print(f"\n{forks} forks (chains of {ARGS.depth}) beside {forks} plain runs:")
            print(f"  {'':<18}" + "".join(f"{case:>14}" for case in CASES) + "   ratios to plain")
            for name, (plain, _) in found["plain"].items():
                cells = "".join(f"{ms:8.1f} ({n:3d})" for ms, n in (found[c][name] for c in CASES))
                ratios = " ".join(f"{found[c][name][0] / plain:5.2f}" for c in CASES[1:])
                print(f"  {name:<18}{cells}   {ratios}")
    finally:
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
