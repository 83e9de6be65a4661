"""The runs list's Search at 200 and 20,000 runs: the substring match read on every run the
page's order walks (before) beside the same match on the runs the trigram index names
(journal_store/substrings.py), or a walk of the order where the text is common (now); and a
review queue's words alike.

    PYTHONPATH=. .venv/bin/python bench/words_search.py [--sizes 200,20000] [--postgres]

The runs are bench/store_rows.py's (30 days; 15% failed), their tasks a sentence each of a small
vocabulary, one run in a thousand holding "quokka" (so "qu" too), one in a hundred "koala", one
in fifty "wallaby" and one in twenty "numbat"; no run holds "zq". Each figure is the first page
of 50 newest first (run_pages.page, as the list and GET /api/runs read it) and the poll's mark
(run_pages.newest_start), of a word no run holds, of the rare words, of two letters, and of a
word most runs hold, alone and among the failed runs; and each queue's first page of 25 (a dead
letter and a conflict per run, bench/store_rows.py's) of words no item holds, of two letters no
item holds, of one item's id, and of words every item holds. The search indexes are read as
the beat's rounds leave them (merged). Medians of --repeats rounds, the sizes in turns, each the
best of 3 calls; ms, and the ratio of the last size's to the first's. SQLite (a file in a temp
dir, not ANALYZEd), or --postgres (a private cluster, VACUUMed and ANALYZEd after the load).
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import parser, sizes_of, ways_by_size  # noqa: E402

PARSER = parser(__doc__, "200,20000", "runs in each store")
ARGS = PARSER.parse_args()
SIZES = sizes_of(ARGS.sizes)
STORE = setup("words-search", ARGS.postgres, sqlite="unused.sqlite3")
WORK, PG_URL = STORE.work, STORE.postgres_url

from django.db import connection  # noqa: E402
from django.db.models import Max  # noqa: E402

from bench.words_tasks import seed  # noqa: E402
from dashboard import listing, queries, run_pages  # noqa: E402
from journal_store import queues, substrings  # noqa: E402

LIMIT = 50  # the list's page
FILTERS = {
    "no run holds it": listing.RunFilter(q="wombat"),
    "one in a thousand": listing.RunFilter(q="quokka"),
    "one in a hundred": listing.RunFilter(q="koala"),
    "one in fifty": listing.RunFilter(q="wallaby"),
    "one in twenty": listing.RunFilter(q="numbat"),
    "most runs": listing.RunFilter(q="the"),
    "two letters no run holds": listing.RunFilter(q="zq"),
    "two letters, one in a thousand": listing.RunFilter(q="qu"),
    "no run holds it, failed": listing.RunFilter(q="wombat", status="failed"),
    "one in a thousand, failed": listing.RunFilter(q="quokka", status="failed"),
}


def before(chosen: listing.RunFilter) -> tuple[Any, Any]:
    """The runs and the walk as the list read them before the index: the match checked on
    every run the filter's other terms select, walked only where those would be."""
    said = substrings.variants(chosen.q)
    match = substrings.RUNS.holding(said, "")
    rest = dataclasses.replace(chosen, q="")
    walk = listing.walked(rest)
    return listing.selected(rest).filter(match), None if walk is None else walk.filter(match)


def page(chosen: listing.RunFilter, now: bool) -> Callable[[], Any]:
    def read() -> Any:
        if now:  # as the list's page and GET /api/runs read it
            chose = listing.selection(chosen, caught_up=False, fewer_than=listing.PAGE_FEW)
            runs, walk = chose.runs, chose.walk
        else:
            runs, walk = before(chosen)
        return [r.run_id for r in run_pages.page(runs, chosen.sort, None, LIMIT, walk).runs]

    return read


def mark(chosen: listing.RunFilter, now: bool) -> Callable[[], Any]:
    def read() -> Any:
        if now:
            return run_pages.newest_start(chosen)
        runs, _ = before(chosen)
        return runs.filter(started_at__isnull=False).aggregate(newest=Max("started_at"))["newest"]

    return read


def queue_page(queue: queues.Queue, words: Callable[[], str], now: bool) -> Callable[[], Any]:
    """A queue's first page of 25 of every status holding the words, newest first."""

    def read() -> Any:
        said = words()
        if now:
            items = queries.queue_rows(queue, words=said)
        else:
            holding = queue.searched.holding(substrings.variants(said), "")
            items = queue.model._default_manager.filter(holding)
        return list(items.order_by("-position").values_list("pk", flat=True)[:25])

    return read


COMMON = {"dead_letters": "reply", "conflicts": "order"}  # in every item's reason, subject


def an_id(queue: queues.Queue) -> str:
    return queue.model._default_manager.order_by("position").values_list("pk", flat=True)[0]


def main() -> None:
    try:
        use = seed("words", WORK, PG_URL, SIZES)
        figures: dict[str, dict[str, Callable[[], Any]]] = {}
        for name, chosen in FILTERS.items():
            for what, make in (("page", page), ("poll's mark", mark)):
                figures[f"{name}, {what}"] = {
                    "before": make(chosen, False),
                    "now": make(chosen, True),
                }
        for queue in queues.QUEUES:
            for name, words in {
                "no item holds it": lambda: "wombat",
                "two letters no item holds": lambda: "zq",
                "one item's id": lambda queue=queue: an_id(queue),
                "every item": lambda queue=queue: COMMON[queue.name],
            }.items():
                figures[f"{queue.name}, {name}"] = {
                    "before": queue_page(queue, words, False),
                    "now": queue_page(queue, words, True),
                }
        for size in SIZES:  # the same answer both ways, and warm
            use(size)
            for name, ways in figures.items():
                assert ways["before"]() == ways["now"](), (size, name)
        backend = "PostgreSQL" if PG_URL else "SQLite"
        ways_by_size(figures, SIZES, use, ARGS.repeats, backend)
    finally:
        connection.close()
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
