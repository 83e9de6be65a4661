"""The runs list's Team box: the teams of stored runs, read at every list view, at 100 runs and
at 20,000, side by side with a plain DISTINCT over the runs' team column in the same process.

The box offers the installed teams and every team a stored run names (an imported run's team
may be none of them). `dashboard.listing.team_choices` reads the stored ones by a loose index
scan, a seek in the team index per team; the baseline is what it did before, Django's
`.values_list("team").distinct()`, which reads every run's entry in that index. Five teams,
run summaries inserted directly (the box reads nothing else). Medians of --repeats calls, taken
in turns, with each figure's ratio to its own at 100 runs.

Production settings (MINUTES_DEBUG=0). SQLite (a file in a temp dir) by default; --postgres for
a private PostgreSQL cluster, VACUUM ANALYZEd after each load as autovacuum would.

    PYTHONPATH=. .venv/bin/python bench/team_box.py [--postgres] [--repeats 301]
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.production_env import setup

parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
parser.add_argument("--postgres", action="store_true", help="on PostgreSQL instead of SQLite")
parser.add_argument("--repeats", type=int, default=301, help="calls timed per figure")
parser.add_argument("--sizes", default="100,20000", help="runs stored, comma-separated")
ARGS = parser.parse_args()
setup("team-box", ARGS.postgres)

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from dashboard import queries  # noqa: E402
from journal_store.models import RunSummary  # noqa: E402

TEAMS = ["repo-fix", "research", "first-flight", "their-team", "fanout"]


def plain() -> list[str]:
    found = RunSummary.objects.exclude(team="").values_list("team", flat=True).distinct()
    return sorted(set(found))


def loose() -> list[str]:
    return queries.loose_scan("projection_run", "team", "", [], "default")


def grow_to(total: int) -> None:
    have = RunSummary.objects.count()
    rows = [
        RunSummary(run_id=f"r-{n:06d}", team=TEAMS[n % len(TEAMS)], status="done", stage="")
        for n in range(have, total)
    ]
    RunSummary.objects.bulk_create(rows, batch_size=2000)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE projection_run")


def medians() -> dict[str, float]:
    taken: dict[str, list[float]] = {"plain DISTINCT": [], "loose scan": []}
    for _ in range(ARGS.repeats):
        for name, read in (("plain DISTINCT", plain), ("loose scan", loose)):
            start = time.perf_counter()
            read()
            taken[name].append(time.perf_counter() - start)
    return {name: statistics.median(times) * 1000 for name, times in taken.items()}


def main() -> None:
    call_command("migrate", verbosity=0)
    sizes = [int(size) for size in ARGS.sizes.split(",")]
    figures = {}
    for size in sizes:
        grow_to(size)
        assert plain() == loose() == sorted(TEAMS), (plain(), loose())
        figures[size] = medians()
    database = "PostgreSQL" if ARGS.postgres else "SQLite"
    print(f"Team box on {database}, ms (median of {ARGS.repeats}), ratio to {sizes[0]} runs")
    print("| runs | " + " | ".join(f"{name} | ratio" for name in figures[sizes[0]]) + " |")
    for size in sizes:
        cells = [
            f"{ms:.3f} | {ms / figures[sizes[0]][name]:.2f}" for name, ms in figures[size].items()
        ]
        print(f"| {size:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
