"""/metrics's look-up of the chosen forks, at 200 and 20,000 runs, before and now.

    PYTHONPATH=. .venv/bin/python bench/metrics_forks.py [--sizes 200,20000] [--repeats 15]

The runs are bench/store_rows.py's (30 days, three teams), 5 of them forks of the support desk
made in the last week. `before` is `shared_past.family` with its forks asked of the chosen runs
(as until 2026-12-07: SQLite took the filter's index and read every run it chose); `now` is
`shared_past.family` as it is, the forks read from the index of parent_id and each looked up
among the chosen runs. Medians of --repeats rounds, each the best of 3 calls, the sizes in
turns; ms, and the ratio of the last size's to the first's. SQLite (a file in a temp dir),
production settings; the plans at the last size follow.
"""

from __future__ import annotations

import shutil
import statistics
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import best_of, parser, sizes_of  # noqa: E402

PARSER = parser(__doc__, "200,20000", "runs in each store")
ARGS = PARSER.parse_args()
SIZES = sizes_of(ARGS.sizes)
WORK = setup("metrics-forks", sqlite="unused.sqlite3").work

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Exists, Q, QuerySet  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench import store_rows  # noqa: E402
from journal_store.models import RunSummary  # noqa: E402
from services import shared_past  # noqa: E402
from services.metrics import MetricsFilter  # noqa: E402

FORKS = 5
WEEK = (store_rows.NOW - timedelta(days=7)).date()
FILTERS = {"team": MetricsFilter(team="support-desk"), "the last week": MetricsFilter(since=WEEK)}


def use(size: int) -> None:
    connection.close()
    connection.settings_dict["NAME"] = str(WORK / f"forks_{size}.sqlite3")
    connection.ensure_connection()


def seed(size: int) -> None:
    store_rows.with_forks(size, FORKS)


def before(chosen_runs: QuerySet[RunSummary]) -> shared_past.Family:
    """`shared_past.family` as it was: its forks asked of the chosen runs."""
    same = shared_past.kin(chosen_runs)
    forks = chosen_runs.filter(parent_id__gt="").exclude(
        Exists(same.filter(verified=True)) | (Q(verified=False) & Exists(same))
    )
    runs = shared_past.family_runs(chosen_runs, forks)
    return shared_past.Family(runs, shared_past.holds(runs))


WAYS: dict[str, Callable[[QuerySet[RunSummary]], Any]] = {
    "before": before,
    "now": shared_past.family,
}


def main() -> None:
    try:
        for size in SIZES:
            use(size)
            call_command("migrate", verbosity=0)
            seed(size)
        times: dict[tuple[str, str, int], list[float]] = {}
        for _ in range(ARGS.repeats):
            for size in SIZES:
                use(size)
                for name, chosen in FILTERS.items():
                    for way, work in WAYS.items():
                        took = best_of(lambda work=work, chosen=chosen: work(chosen.runs()))
                        times.setdefault((name, way, size), []).append(took)
        print(f"SQLite, medians of {ARGS.repeats} rounds (each the best of 3 calls); ms")
        print(f"{'':<24}" + "".join(f"{size:>10,}" for size in SIZES) + f"{'ratio':>8}")
        for name in FILTERS:
            for way in WAYS:
                ms = [statistics.median(times[name, way, size]) for size in SIZES]
                cells = "".join(f"{m:>10.2f}" for m in ms)
                print(f"{way + ', ' + name:<24}{cells}{ms[-1] / ms[0]:>8.2f}")
        use(SIZES[-1])
        for name, chosen in FILTERS.items():
            for way, work in WAYS.items():
                with CaptureQueriesContext(connection) as asked:
                    work(chosen.runs())
                print(f"\n{way}, {name}:")
                for query in asked.captured_queries[:1]:
                    with connection.cursor() as cursor:
                        cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
                        print("\n".join(f"    {row[-1]}" for row in cursor.fetchall()))
    finally:
        connection.close()
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
