"""A review queue narrowed to the runs the metrics chose, and its oldest open item.

    PYTHONPATH=. .venv/bin/python bench/dashboard.py --keep        # seeds 10,000 runs, keeps them
    PYTHONPATH=. .venv/bin/python bench/queue_waits.py --reuse DIR  # DIR: what --keep printed

On the dashboard bench's database, in-process, medians of interleaved rounds: what a queue's
page asks of its rows (the count and the first page of open items) and the oldest open item,
with the runs chosen by `run_id IN (the chosen runs)` (the baseline, how the queues narrowed
until 2026-12-04) and by `EXISTS` (each row's run looked up by its key, services/metrics.py
`MetricsFilter.items`); beside them the navigation's count of open items, the floor of any
question to the queue tables. Three filters: every run of the team, one scenario's runs that
hold every dead letter, and one scenario's runs that hold none.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from bench.production_env import setup

PARSER = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
PARSER.add_argument("--reuse", type=Path, required=True, help="a --keep dashboard bench's dir")
PARSER.add_argument("--rounds", type=int, default=101, help="interleaved rounds (medians)")
ARGS = PARSER.parse_args()
DB = ARGS.reuse / "dashboard.sqlite3"
if not DB.exists():
    PARSER.error(f"--reuse: no dashboard.sqlite3 in {ARGS.reuse} (run bench/dashboard.py --keep)")
setup("queue-waits", sqlite="dashboard.sqlite3", work=ARGS.reuse)

from django.db.models import QuerySet  # noqa: E402

from dashboard import waiting  # noqa: E402
from journal_store import queues  # noqa: E402
from journal_store.models import DeadLetter, RunSummary  # noqa: E402
from services import metrics  # noqa: E402

FILTERS = ({"team": "repo-fix"}, {"scenario": "silent-dropout"}, {"scenario": "premature-done"})


def by_in(chosen: metrics.MetricsFilter) -> QuerySet[DeadLetter]:
    return DeadLetter.objects.filter(run_id__in=chosen.runs().values("run_id"))


def by_exists(chosen: metrics.MetricsFilter) -> QuerySet[DeadLetter]:
    return chosen.items(DeadLetter.objects.all())  # the project's own narrowing


def page(rows: QuerySet[DeadLetter]) -> tuple[int, list[str]]:
    open_rows = rows.filter(status=queues.OPEN)
    return open_rows.count(), [d.pk for d in open_rows.order_by("-position")[:25]]


def oldest(rows: QuerySet[DeadLetter]) -> str | None:
    found = queues.oldest_open(queues.DEAD_LETTERS, rows)
    return None if found is None else found.pk


def main() -> None:
    print(
        f"{RunSummary.objects.count():,} runs, {DeadLetter.objects.count():,} dead letters "
        f"({DeadLetter.objects.filter(status=queues.OPEN).count():,} open)"
    )
    cases: dict[str, Callable[[], object]] = {"floor: the navigation's counts": waiting.open_items}
    for params in FILTERS:
        chosen = metrics.MetricsFilter.parse(params)
        said = ", ".join(f"{k}={v}" for k, v in params.items())
        # Both ways must find the same items, or the figures compare nothing.
        assert page(by_in(chosen)) == page(by_exists(chosen)), said
        assert oldest(by_in(chosen)) == oldest(by_exists(chosen)), said
        for way, rows in (("IN", by_in), ("EXISTS", by_exists)):
            cases[f"{said}: page, {way}"] = lambda rows=rows, c=chosen: page(rows(c))
            cases[f"{said}: oldest, {way}"] = lambda rows=rows, c=chosen: oldest(rows(c))
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(ARGS.rounds):
        for name, case in cases.items():
            start = time.perf_counter()
            case()
            times[name].append(time.perf_counter() - start)
    median = {name: statistics.median(found) * 1000 for name, found in times.items()}
    print(f"medians of {ARGS.rounds} interleaved rounds, in-process, SQLite")
    print(f"{'':<46}{'ms':>8}{'IN / EXISTS':>13}")
    for name, ms in median.items():
        ratio = ""
        if name.endswith("EXISTS"):
            ratio = f"{median[name.removesuffix('EXISTS') + 'IN'] / ms:>13.1f}"
        print(f"{name:<46}{ms:>8.3f}{ratio}")


if __name__ == "__main__":
    main()
