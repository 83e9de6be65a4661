"""The runs list filtered where no index of the filter's serves the order, at 200 and 20,000
runs: the filter's index and a sort of every run it selects (before) beside a walk of the
order's index for a window of runs first (now: dashboard/run_pages.py walked, listing.walked).

    PYTHONPATH=. .venv/bin/python bench/filtered_runs.py [--sizes 200,20000] [--postgres]

The runs are bench/store_rows.py's (30 days; 15% failed, 15% the support desk's, 2% running),
a tenth of them tagged "nightly" and three tagged "audit". Each figure is the first page of 50
(run_pages.page, as the list and GET /api/runs read it), and the poll's mark (the latest start
the filter selects: a maximum before, the list's first run newest first now). `before` is the
same call without the walk. Medians of --repeats rounds, the sizes in turns, each the best of 3
calls; ms, and the ratio of the last size's to the first's. SQLite (a file in a temp dir, not
ANALYZEd), or --postgres (a private cluster, ANALYZEd after the load).
"""

from __future__ import annotations

import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import parser, sized_stores, sizes_of, ways_by_size  # noqa: E402

PARSER = parser(__doc__, "200,20000", "runs in each store")
ARGS = PARSER.parse_args()
SIZES = sizes_of(ARGS.sizes)
STORE = setup("filtered-runs", ARGS.postgres, sqlite="unused.sqlite3")
WORK, PG_URL = STORE.work, STORE.postgres_url

from django.db import connection  # noqa: E402
from django.db.models import Max  # noqa: E402

from bench import store_rows  # noqa: E402
from dashboard import listing, run_pages  # noqa: E402
from journal_store.models import RunTag  # noqa: E402

LIMIT = 50  # the list's page
FILTERS = {
    "failed, by tokens": listing.RunFilter(status="failed", sort="tokens"),
    "support desk, by cost": listing.RunFilter(team="support-desk", sort="cost"),
    "tagged (a tenth), newest": listing.RunFilter(tag="nightly"),
    "tagged (a tenth), by tokens": listing.RunFilter(tag="nightly", sort="tokens"),
    "running (2%), by tokens": listing.RunFilter(status="running", sort="tokens"),
    "tagged (3 runs), by tokens": listing.RunFilter(tag="audit", sort="tokens"),
}


def seed() -> Callable[[int], None]:
    use = sized_stores("filtered", WORK, PG_URL, SIZES)
    for size in SIZES:
        use(size)
        rng = random.Random(size)
        runs = store_rows.runs_of(size, rng)
        store_rows.store(runs, rng)
        tags = [RunTag(run_id=r.run_id, tag="nightly") for r in runs[::10]]
        tags += [RunTag(run_id=r.run_id, tag="audit") for r in runs[7:10]]
        RunTag.objects.bulk_create(tags)
        if PG_URL:
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
    return use


def page(chosen: listing.RunFilter, walk: bool) -> Callable[[], Any]:
    def read() -> Any:
        walked = listing.walked(chosen) if walk else None
        return run_pages.page(listing.selected(chosen), chosen.sort, None, LIMIT, walked)

    return read


def mark(chosen: listing.RunFilter, walk: bool) -> Callable[[], Any]:
    def read() -> Any:
        if walk:
            return run_pages.newest_start(chosen)
        runs = listing.selected(chosen).filter(started_at__isnull=False)
        return runs.aggregate(newest=Max("started_at"))["newest"]

    return read


def main() -> None:
    try:
        use = seed()
        figures: dict[str, dict[str, Callable[[], Any]]] = {}
        for name, chosen in FILTERS.items():
            for what, make in (("page", page), ("poll's mark", mark)):
                figures[f"{name}, {what}"] = {
                    "before": make(chosen, False),
                    "now": make(chosen, True),
                }
        for size in SIZES:  # the same answer both ways, and warm
            use(size)
            for name, ways in figures.items():
                before, now = ways["before"](), ways["now"]()
                if name.endswith("page"):
                    before, now = [r.run_id for r in before.runs], [r.run_id for r in now.runs]
                assert before == now, (size, name)
        backend = "PostgreSQL" if PG_URL else "SQLite"
        ways_by_size(figures, SIZES, use, ARGS.repeats, backend)
    finally:
        connection.close()
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
