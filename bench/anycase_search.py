"""The runs list's Search for a text beyond ASCII on SQLite, matched by our function
(journal_store/anycase.py: "émile" finds "Émile"), beside the same search for an ASCII text of
the same shape and as many runs, matched by SQLite's LIKE, in the same store and run.

    PYTHONPATH=. .venv/bin/python bench/anycase_search.py [--sizes 200,20000] [--repeats 11]

The runs are bench/store_rows.py's (30 days; 15% failed), their tasks a sentence each of a small
vocabulary; one run in fifty holds "wallaby" and another one in fifty "wålläby"; no run holds
"wombat" or "wømbat", "zq" or "žq". Each figure is the first page of 50 newest first
(run_pages.page, as the list and GET /api/runs read it) and the poll's mark
(run_pages.newest_start). A two-letter text has no trigram: every run is read to say that none
holds it, the dearest case for a function called on each run. Medians of --repeats rounds, the
sizes in turns, each the best of 3 calls; ms, and the ratio of the last size's to the first's.
SQLite only: PostgreSQL's match is its own UPPER ... LIKE in either case.
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
from bench.streams_setup import parser, sizes_of, ways_by_size  # noqa: E402

PARSER = parser(__doc__, "200,20000", "runs in each store", repeats=11)
ARGS = PARSER.parse_args()
if ARGS.postgres:
    PARSER.error("SQLite only: on PostgreSQL both texts are the same UPPER ... LIKE")
SIZES = sizes_of(ARGS.sizes)
STORE = setup("anycase-search", sqlite="unused.sqlite3")
WORK = STORE.work

from django.db import connection  # noqa: E402

from bench.words_tasks import seed, task  # noqa: E402
from dashboard import listing, run_pages  # noqa: E402

LIMIT = 50  # the list's page
TEXTS = {  # what is searched: (ASCII, beyond ASCII), found in as many runs
    "one in fifty": ("wallaby", "WÅLLÄBY"),
    "no run holds it": ("wombat", "wømbat"),
    "two letters no run holds": ("zq", "žq"),
}


def marked(rng: random.Random, n: int) -> str:
    found = task(rng, n)
    return found + " for the wålläby account" if n % 50 == 29 else found


def page(q: str) -> Callable[[], Any]:
    def read() -> Any:
        chosen = listing.RunFilter(q=q)
        chose = listing.selection(chosen, caught_up=False, fewer_than=listing.PAGE_FEW)
        return len(run_pages.page(chose.runs, chosen.sort, None, LIMIT, chose.walk).runs)

    return read


def mark(q: str) -> Callable[[], Any]:
    return lambda: run_pages.newest_start(listing.RunFilter(q=q)) is not None


def main() -> None:
    try:
        use = seed("anycase", WORK, None, SIZES, marked)
        figures: dict[str, dict[str, Callable[[], Any]]] = {}
        for name, (ascii_text, beyond) in TEXTS.items():
            for what, make in (("page", page), ("poll's mark", mark)):
                figures[f"{name}, {what}"] = {"ASCII": make(ascii_text), "beyond": make(beyond)}
        for size in SIZES:  # as many runs found both ways, and warm
            use(size)
            for name, ways in figures.items():
                assert ways["ASCII"]() == ways["beyond"](), (size, name)
        ways_by_size(figures, SIZES, use, ARGS.repeats, "SQLite")
    finally:
        connection.close()
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
