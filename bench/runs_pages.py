"""The runs list's first and a late page at 200 and 20,000 runs, and the dead letters' with as
many letters: paged after a cursor (now, dashboard/run_pages.py, dashboard/api/review.py)
beside paged by an offset (before), in the same process.

    cursor    run_pages.page: up to --limit runs after the cursor of the run before the page,
              on a store migrated to the end (the index of each sort's column and the run id,
              migrations 0035 and 0040).
    offset    the query GET /api/runs and the list's page ran before: the same filter and
              order (ties by run id descending) sliced at the offset, and the count of every
              run it selects (django-ninja's LimitOffsetPagination and Django's Paginator
              both ask it at every page), on a store migrated to 0033, with the indexes (and
              columns) it had then.
    API, page GET /api/runs and the list's page (/, HTML) in-process (Django's test client,
              signed in), on the store of now: the whole request, rows' stall and fork point
              and the template included.
    dead letters
              GET /api/review/dead-letters?status=all, newest first: the letters before the
              position of the one before the page (`position`, migration 0036's index; `API`,
              the whole request) beside the slice at the offset and the count (`offset`,
              before). One letter per run, 85% decided.
    API (status)
              GET /api/review/dead-letters showing the open letters, /api/review/conflicts
              the open conflicts or every one, pages of --limit: the first page, and the
              late one (the last whole page or the one 90% in) asked `before` the item above
              it, as a script paging with `next` would ask. Each page read once before it is
              timed, and refused unless it shows --limit items: a page of fewer costs less
              and is no comparison. A conflict a run (bench/store_rows.py), 85% resolved, on
              the store of now.
    queue page
              /review/dead-letters (HTML, 25 a page) showing every letter or the open ones:
              the first page, and the late one asked `before` the position of the letter above
              it, as its Older link asks (dashboard/queue_pages.py); its page by number (a
              count and an OFFSET) is gone, the `offset` figure above is its query.

Each at the first page and a late page (the one that starts 90% of the way in, or the last
whole page when that is nearer the end: runs without the value, last, fill the very end), newest
first (the default) and by tokens, cost and duration (a duration kept once a run's clock
stops, migration 0040; before, worked out per row from the clock, which sorted every run). The
runs are summaries written as the projector writes them (bench/store_rows.py; no journal: the
list reads none), their starts spread over 30 days with some tied, 0.5% without a start
(journals that recorded no times), 5% with no known cost, 2% running. On the store of now the
101 oldest letters and conflicts are open whatever the draw made them (store_rows.open_oldest:
200 runs open about 30 of each, fewer than a page), as the store guard's stores
(tests/dashboard/test_store_pages_cost_the_same_at_any_size.py).

Medians of --repeats rounds, the sizes and stores taking turns, each round's figure the best
of --calls calls in a row (other processes on the machine preempt one now and then), ms; and
the ratio of the largest size's figure to the smallest's (the rule: a page costs what it
shows, so a ratio above ~1.5 is a cost that grows with history). Then the query plans of the
late pages at the largest size. Production settings (DEBUG off); SQLite by default (WAL,
synchronous=FULL, files in a temp dir, not ANALYZEd: Django never runs it), --postgres for a
private PostgreSQL cluster with fsync on, ANALYZEd after the load as autovacuum would.

    PYTHONPATH=. .venv/bin/python bench/runs_pages.py [--sizes 200,20000] [--postgres]
"""

from __future__ import annotations

import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import best_of, parser, sizes_of  # noqa: E402

PARSER = parser(__doc__, "200,20000", "runs in each store")
PARSER.add_argument("--limit", type=int, default=50, help="runs a page shows (the page's 50)")
PARSER.add_argument("--calls", type=int, default=3, help="calls a round (its best)")
PARSER.add_argument("--seed", type=int, default=1, help="random seed")
ARGS = PARSER.parse_args()
SIZES = sizes_of(ARGS.sizes)
STORE = setup("runs-pages", ARGS.postgres, sqlite="unused.sqlite3")
WORK, PG_URL = STORE.work, STORE.postgres_url

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import DurationField, ExpressionWrapper, F, QuerySet  # noqa: E402
from django.db.models.functions import Coalesce, Now  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench import store_rows  # noqa: E402
from bench.store_rows import conflicts_of, letters_of, runs_of  # noqa: E402
from dashboard import listing, run_pages  # noqa: E402
from journal_store import queues  # noqa: E402
from journal_store.models import Conflict, DeadLetter, RunSummary  # noqa: E402

STORES = ("before", "now")
SORTS = ("started", "tokens", "cost", "duration")
# The orders as the list had them before the cursor (dashboard/listing.py at 0033): NULLs
# last, ties by run id descending; the duration worked out per row from the clock.
OLD_ORDER: dict[str, list[Any]] = {
    "started": [F("started_at").desc(nulls_last=True), "-run_id"],
    "tokens": ["-tokens", "-run_id"],
    "cost": [F("cost").desc(nulls_last=True), "-run_id"],
    "duration": [F("clock_duration").desc(nulls_last=True), "-run_id"],
}
CLOCK_DURATION = ExpressionWrapper(
    Coalesce(F("finished_at"), Now()) - F("started_at") - F("waited"),
    output_field=DurationField(),
)
QUEUE_PAGE = 25  # the queues' pages' (dashboard/views/review.py PAGE)
OPEN_AT_LEAST = 101  # past the navigation's count (dashboard/waiting.py CAP) and a page
QUEUES = {"dead letters": ("dead-letters", DeadLetter), "conflicts": ("conflicts", Conflict)}


def store_name(size: int, store: str) -> str:
    return f"runs_{store}_{size}"


def use(size: int, store: str) -> None:
    """Point the default connection at the store (a file, or a database of the cluster)."""
    connection.close()
    if PG_URL:
        connection.settings_dict["NAME"] = store_name(size, store)
    else:
        connection.settings_dict["NAME"] = str(WORK / f"{store_name(size, store)}.sqlite3")
    connection.ensure_connection()


def seed(rng: random.Random) -> None:
    if PG_URL:
        with connection.cursor() as cursor:
            for size in SIZES:
                for store in STORES:
                    cursor.execute(f"CREATE DATABASE {store_name(size, store)}")
    for size in SIZES:
        runs = runs_of(size, rng)
        for store in STORES:
            use(size, store)
            call_command("migrate", verbosity=0)
            RunSummary.objects.bulk_create(runs, batch_size=2_000)
            DeadLetter.objects.bulk_create(letters_of(runs, rng), batch_size=2_000)
            if store == "now":
                # Their own draw: the letters and runs drawn as before they were added.
                drawn = random.Random(ARGS.seed + size)
                Conflict.objects.bulk_create(conflicts_of(runs, drawn), batch_size=2_000)
                store_rows.open_oldest(OPEN_AT_LEAST)
            if store == "before":  # the indexes (and columns) the offset had: back to 0033
                call_command("migrate", "journal_store", "0033", verbosity=0)
            get_user_model().objects.create(username="bench")
            if PG_URL:
                with connection.cursor() as cursor:
                    cursor.execute("VACUUM ANALYZE")


def late(size: int) -> int:
    """Where the late page starts: 90% of the way in, or the last whole page."""
    return store_rows.late(size, ARGS.limit)


def offset_page(size: int, sort: str, later: bool) -> Callable[[], Any]:
    """The page as it was read before: a slice at the offset and a count of every run."""

    def read() -> Any:
        # Without the duration column, which the store of before has not (migration 0040).
        runs = RunSummary.objects.defer("duration")
        if sort == "duration":
            runs = runs.annotate(clock_duration=CLOCK_DURATION)
        ordered: QuerySet[RunSummary] = runs.order_by(*OLD_ORDER[sort])
        start = late(size) if later else 0
        return list(ordered[start : start + ARGS.limit]), ordered.count()

    return read


def cursor_of(size: int, sort: str, later: bool) -> run_pages.Cursor | None:
    """The cursor a late page is asked after: the run before its first."""
    return store_rows.cursor_of(size, sort, ARGS.limit) if later else None


def cursor_page(size: int, sort: str, later: bool) -> Callable[[], Any]:
    after = cursor_of(size, sort, later)

    def read() -> Any:
        runs = listing.matching(listing.RunFilter(sort=sort))
        return run_pages.page(runs, sort, after, ARGS.limit)

    return read


def request(path: str, size: int, sort: str, later: bool) -> Callable[[], Any]:
    after = cursor_of(size, sort, later)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="bench"))
    params = {"sort": sort} | ({"after": after.token()} if after else {})
    if path == "/api/runs":
        params["limit"] = str(ARGS.limit)

    def read() -> Any:
        answer = client.get(path, params)
        assert answer.status_code == 200, (path, params, answer.content[:300])
        return answer

    return read


def letters_offset(size: int, sort: str, later: bool) -> Callable[[], Any]:
    """The dead letters' API page as it was read before (newest first, every status): a slice
    at the offset and a count."""

    def read() -> Any:
        ordered = DeadLetter.objects.order_by("-position")
        start = late(size) if later else 0
        return list(ordered[start : start + ARGS.limit]), ordered.count()

    return read


def letters_before(size: int, later: bool) -> int:
    """The `before` a late page of the dead letters is asked with: its first letter's position
    plus one (0: the first page)."""
    if not later:
        return 0
    return int(DeadLetter.objects.order_by("-position")[late(size)].position) + 1


def letters_page(size: int, sort: str, later: bool) -> Callable[[], Any]:
    """The dead letters' page now: the letters before a position, newest first."""
    before = letters_before(size, later)

    def read() -> Any:
        letters = queues.DEAD_LETTERS.model._default_manager.order_by("-position")
        return list((letters.filter(position__lt=before) if before else letters)[: ARGS.limit + 1])

    return read


def letters_request(size: int, sort: str, later: bool) -> Callable[[], Any]:
    before = letters_before(size, later)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="bench"))
    params = {"status": "all", "limit": str(ARGS.limit)} | ({"before": before} if before else {})

    def read() -> Any:
        answer = client.get("/api/review/dead-letters", params)
        assert answer.status_code == 200, (params, answer.content[:300])
        return answer

    return read


def queue_request(queue: str, status: str) -> Callable[[int, str, bool], Callable[[], Any]]:
    """GET /api/review/<queue> showing `status`, newest first: its first page, or a late one,
    asked `before` the item above it as its `next` would be, each showing --limit items."""
    path, model = QUEUES[queue]

    def make(size: int, sort: str, later: bool) -> Callable[[], Any]:
        params = {"status": status, "limit": str(ARGS.limit)}
        if later:
            items = model.objects.all()
            items = items.filter(status=status) if status != "all" else items
            params["before"] = str(store_rows.before_of(items, ARGS.limit))
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(get_user_model().objects.get(username="bench"))

        def read() -> Any:
            answer = client.get(f"/api/review/{path}", params)
            assert answer.status_code == 200, (path, params, answer.content[:300])
            return answer

        shown = len(read().json()["items"])
        assert shown == ARGS.limit, f"{queue} ({status}) at {size:,} shows {shown} items"
        return read

    return make


def queue_page(status: str) -> Callable[[int, str, bool], Callable[[], Any]]:
    """The dead letters' own page (/review/dead-letters, HTML) showing `status`: its first
    page, or the one 90% of the way in, asked `before` the position of the letter above it,
    as its Older link asks (dashboard/queue_pages.py)."""

    def make(size: int, sort: str, later: bool) -> Callable[[], Any]:
        params = {"status": status}
        if later:
            letters = DeadLetter.objects.all()
            letters = letters.filter(status=status) if status != "all" else letters
            params["before"] = str(store_rows.before_of(letters, QUEUE_PAGE))
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(get_user_model().objects.get(username="bench"))

        def read() -> Any:
            answer = client.get("/review/dead-letters", params)
            assert answer.status_code == 200, (params, answer.content[:300])
            return answer

        return read

    return make


# figure name -> (store, sort, late, what makes the work at a size)
Figure = tuple[str, str, bool, Callable[[int, str, bool], Callable[[], Any]]]
FIGURES: dict[str, Figure] = {}
for _sort in SORTS:
    for _late in (False, True):
        if _sort in ("tokens", "cost") and not _late:
            continue  # the first page of another indexed order: as newest first's
        _at = f"{_sort}, {'late' if _late else 'first'} page"
        FIGURES[f"offset (before), {_at}"] = ("before", _sort, _late, offset_page)
        FIGURES[f"cursor, {_at}"] = ("now", _sort, _late, cursor_page)
        if _sort in ("started", "tokens", "duration"):
            FIGURES[f"API, {_at}"] = ("now", _sort, _late, lambda *a: request("/api/runs", *a))
            FIGURES[f"page /, {_at}"] = ("now", _sort, _late, lambda *a: request("/", *a))
for _late in (False, True):
    _at = f"dead letters, {'late' if _late else 'first'} page"
    FIGURES[f"offset (before), {_at}"] = ("before", "letters", _late, letters_offset)
    FIGURES[f"position, {_at}"] = ("now", "letters", _late, letters_page)
    FIGURES[f"API, {_at}"] = ("now", "letters", _late, letters_request)
    for _status in ("all", "open"):
        _page = f"queue page ({_status}), {'late' if _late else 'first'} page"
        FIGURES[_page] = ("now", "letters", _late, queue_page(_status))
for _queue in QUEUES:
    # Every dead letter's: the `API, dead letters` lines above.
    for _status in ("open", "all") if _queue == "conflicts" else ("open",):
        for _late in (False, True):
            _api = f"API, {_queue} ({_status}), {'late' if _late else 'first'} page"
            FIGURES[_api] = ("now", "letters", _late, queue_request(_queue, _status))


def plans(size: int) -> None:
    """The late pages' query plans at `size`, on each store."""
    explain = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
    for store, work, letters in (
        ("before", offset_page, letters_offset),
        ("now", cursor_page, letters_page),
    ):
        use(size, store)
        for sort in (*SORTS, "letters"):
            # The cursor is found before: not the page's.
            read = (letters if sort == "letters" else work)(size, sort, True)
            with CaptureQueriesContext(connection) as asked:
                read()
            print(f"\n{store}, {sort}, late page:")
            for query in asked.captured_queries:
                if "projection_run" not in query["sql"] and "dead_letter" not in query["sql"]:
                    continue  # the catch-up's checkpoint reads
                with connection.cursor() as cursor:
                    cursor.execute(explain + query["sql"])
                    lines = [str(row[-1]) for row in cursor.fetchall()]
                print("  " + query["sql"][:150].replace("\n", " ") + " …")
                print("\n".join(f"    {line}" for line in lines))


def main() -> None:
    rng = random.Random(ARGS.seed)
    backend = "PostgreSQL" if PG_URL else "SQLite"
    try:
        started = time.perf_counter()
        seed(rng)
        print(
            f"seeded {', '.join(f'{s:,}' for s in SIZES)} runs on {backend} twice (the store "
            f"before, migrated to 0033, and now) in {time.perf_counter() - started:.1f} s"
        )
        works: dict[tuple[str, int], Callable[[], Any]] = {}
        for name, (store, sort, late, make) in FIGURES.items():
            for size in SIZES:
                use(size, store)
                works[name, size] = make(size, sort, late)
                works[name, size]()  # warm: templates compiled, the statements prepared
        times: dict[tuple[str, int], list[float]] = {key: [] for key in works}
        for _ in range(ARGS.repeats):
            for size in SIZES:
                for store in STORES:
                    use(size, store)
                    for name, (at, *_) in FIGURES.items():
                        if at != store:
                            continue
                        times[name, size].append(best_of(works[name, size], ARGS.calls))
        print(
            f"\n{backend}, in-process, pages of {ARGS.limit}; medians of {ARGS.repeats} rounds "
            f"(each the best of {ARGS.calls} calls), the sizes and stores in turns; ms"
        )
        head = "".join(f"{size:>10,}" for size in SIZES)
        print(f"{'runs in the store':<42}{head}{'ratio':>8}")
        for name in FIGURES:
            medians = {size: statistics.median(times[name, size]) for size in SIZES}
            print(
                f"{name:<42}"
                + "".join(f"{medians[size]:>10.2f}" for size in SIZES)
                + f"{medians[SIZES[-1]] / medians[SIZES[0]]:>8.2f}"
            )
        plans(SIZES[-1])
    finally:
        connection.close()
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
