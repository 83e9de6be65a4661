"""The metrics' oldest open item of the runs a date filter chose, at 200 and 20,000 runs: the
walk of every open item oldest first, each one's run looked up (before), beside the items
opened from the filter's first day on and those of the few runs that waited since before they
started (now: services/metrics.py oldest_open, MetricsFilter.early_runs, migration 0055).

    PYTHONPATH=. .venv/bin/python bench/oldest_open.py [--sizes 200,20000] [--postgres]

The runs are bench/store_rows.py's (30 days; a dead letter and a conflict each, 15% of them
open), and one run in a hundred holds a dead letter more, open, opened ten days before the run
started (a journal whose times run backwards): the runs of the second part. Each figure is
services/metrics.py oldest_open under the filter, which /metrics and GET /api/metrics read;
both ways name the same item (checked first). Medians of --repeats rounds, the sizes in turns,
each the best of 3 calls; ms, and the ratio of the last size's to the first's. SQLite (a file
in a temp dir, not ANALYZEd), or --postgres (a private cluster, ANALYZEd after the load).
"""

from __future__ import annotations

import random
import shutil
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import parser, sized_stores, sizes_of, ways_by_size  # noqa: E402

PARSER = parser(__doc__, "200,20000", "runs in each store")
ARGS = PARSER.parse_args()
SIZES = sizes_of(ARGS.sizes)
STORE = setup("oldest-open", ARGS.postgres, sqlite="unused.sqlite3")
WORK, PG_URL = STORE.work, STORE.postgres_url

from django.db import connection  # noqa: E402

from bench import store_rows  # noqa: E402
from journal_store import queues  # noqa: E402
from journal_store.models import DeadLetter  # noqa: E402
from services import metrics  # noqa: E402

DAYS = {"the last day": 1, "the last week": 7, "the last fortnight": 14}


def seed() -> Callable[[int], None]:
    use = sized_stores("oldest", WORK, PG_URL, SIZES)
    for size in SIZES:
        use(size)
        rng = random.Random(size)
        runs = store_rows.runs_of(size, rng)
        store_rows.store(runs, rng)
        backwards = [
            DeadLetter(
                letter_id=f"{run.run_id}:early",
                run_id=run.run_id,
                status=queues.OPEN,
                position=(size + n + 1) * 100,
                created_at=run.started_at - timedelta(days=10),
                reason="a journal whose times run backwards",
            )
            for n, run in enumerate(runs[::100])
            if run.started_at
        ]
        DeadLetter.objects.bulk_create(backwards)
        store_rows.waiting_since()
        if PG_URL:
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
    return use


def walked(chosen: metrics.MetricsFilter) -> Any:
    """Before: every open item of the chosen runs, oldest first, the first (per queue)."""
    found = []
    for queue in queues.QUEUES:
        rows = chosen.items(queue.model._default_manager.all())
        if (item := queues.oldest_open(queue, rows)) is not None:
            found.append((item.created_at, item.position, item.pk))
    return min(found)[2] if found else None


def now(chosen: metrics.MetricsFilter) -> Any:
    found = metrics.oldest_open(chosen)
    return found and found["id"]


def filters() -> dict[str, metrics.MetricsFilter]:
    newest = store_rows.NOW.date()
    found = {}
    for name, days in DAYS.items():
        since = newest - timedelta(days=days)
        found[name] = metrics.MetricsFilter(since=since)
        found[f"{name}, the support desk"] = metrics.MetricsFilter(since=since, team="support-desk")
    return found


def main() -> None:
    try:
        use = seed()
        figures: dict[str, dict[str, Callable[[], Any]]] = {
            name: {"before": lambda c=chosen: walked(c), "now": lambda c=chosen: now(c)}
            for name, chosen in filters().items()
        }
        for size in SIZES:  # the same item both ways, and warm
            use(size)
            for name, ways in figures.items():
                assert ways["before"]() == ways["now"](), (size, name)
        backend = "PostgreSQL" if PG_URL else "SQLite"
        ways_by_size(figures, SIZES, use, ARGS.repeats, backend, digits=3)
    finally:
        connection.close()
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
