"""The review queue's page of open conflicts and the API's, their cards read for the page at once
(now, services/review.cards_of) beside read one card at a time (before 2026-12-07), in the same
process, on the same store.

    page      /review/conflicts?status=open (HTML, a reviewer's, 25 cards), in-process
              (Django's test client, signed in).
    API 25, API 50
              GET /api/review/conflicts?status=open&limit=25 (and 50), with a reviewer's token.

"before" reads each card on its own, as the cards were read before (bench/conflict_store.
one_at_a_time: the decisions on its claims since it was parked, a page of them at a time; its
fact's stream's version, then its windows of 64 back to the predicate's last change; a desk
order's row); "now" reads the page's cards together: the decisions on every card's claims in
one statement (a UNION ALL of each card's seek), every fact's window in another, the orders in
a third. The store: --count open conflicts (bench/conflict_store.py: two runs' claims on an
order's status each, up to --facts changes of the subject's facts before it and up to
--decisions decisions on its claims after, one in three committing to a desk order, one in
five on the subject of the one before), and --others events of other runs in the journal.

Each read refused unless it shows as many conflicts as it asks. Medians of --repeats rounds,
"before" and "now" in turns, each round's figure the best of --calls calls in a row; ms, the
queries one read makes, and the ratio of before's time to now's. Production settings (DEBUG
off); SQLite by default (WAL, synchronous=FULL, a file in a temp dir), --postgres for a private
PostgreSQL cluster with fsync on, ANALYZEd after the load.

    PYTHONPATH=. .venv/bin/python bench/conflict_page.py [--postgres]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench import streams_setup  # noqa: E402
from bench.production_env import setup  # noqa: E402

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--postgres", action="store_true", help="a private PostgreSQL, not SQLite")
PARSER.add_argument("--repeats", type=int, default=15, help="rounds (medians)")
PARSER.add_argument("--others", type=int, default=100_000, help="other runs' events (100 a run)")
PARSER.add_argument("--count", type=int, default=60, help="open conflicts")
PARSER.add_argument("--facts", type=int, default=20, help="a subject's facts, at most")
PARSER.add_argument("--decisions", type=int, default=6, help="decisions since, at most")
PARSER.add_argument("--calls", type=int, default=3, help="calls a round (its best)")
ARGS = PARSER.parse_args()
setup("conflict-page", ARGS.postgres)

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Permission  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench import conflict_store  # noqa: E402
from dashboard.models import ApiToken  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402

READS = {  # name: (address, conflicts shown)
    "page": ("/review/conflicts?status=open", 25),
    "API 25": ("/api/review/conflicts?status=open&limit=25", 25),
    "API 50": ("/api/review/conflicts?status=open&limit=50", 50),
}
WAYS: dict[str, Callable[[], AbstractContextManager[Any]]] = {
    "before": conflict_store.one_at_a_time,
    "now": nullcontext,
}


def shown(answer: Any, url: str) -> int:
    if url.startswith("/api/"):
        return len(answer.json()["items"])
    return answer.content.count(b'<section class="card" id="cf-')


def main() -> None:
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    conflict_store.build(ARGS.count, random.Random(1), ARGS.facts, ARGS.decisions)
    streams_setup.others(DjangoJournal(), ARGS.others)
    streams_setup.settle(checkpoint=True)
    print(
        f"{ARGS.count} open conflicts and {ARGS.others:,} other events "
        f"in {time.perf_counter() - started:.1f} s"
    )
    user, _ = get_user_model().objects.get_or_create(username="bench")
    user.user_permissions.add(Permission.objects.get(codename="decide"))  # a reviewer's page
    page = Client(HTTP_HOST="127.0.0.1")
    page.force_login(user)
    api = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(user, 'b')[1]}")

    def get(name: str) -> Any:
        url, count = READS[name]
        answer = (api if url.startswith("/api/") else page).get(url)
        assert answer.status_code == 200 and shown(answer, url) == count, (name, count)
        return answer

    queries: dict[tuple[str, str], int] = {}
    bodies: dict[tuple[str, str], bytes] = {}
    for name in READS:
        get(name)  # the first read catches the projections up on the load: not a page's cost
        for way, within in WAYS.items():
            with within(), CaptureQueriesContext(connection) as ctx:
                get(name)
            queries[name, way] = len(ctx.captured_queries)
            if name.startswith("API"):  # the same items, the same fields, either way
                with within():
                    bodies[name, way] = get(name).content
        if name.startswith("API"):
            assert bodies[name, "before"] == bodies[name, "now"], name
    times: dict[tuple[str, str], list[float]] = {key: [] for key in queries}
    for _ in range(ARGS.repeats):
        for name in READS:
            for way, within in WAYS.items():
                best = float("inf")
                with within():
                    for _ in range(ARGS.calls):
                        at = time.perf_counter()
                        get(name)
                        best = min(best, time.perf_counter() - at)
                times[name, way].append(best * 1000)
    print(
        f"\n{connection.vendor}, in-process, medians of {ARGS.repeats} rounds (each the best "
        f"of {ARGS.calls} calls), before and now in turns; ms, and the queries of one read"
    )
    print(f"{'':<10}{'before':>10}{'now':>10}{'ratio':>8}{'queries before':>17}{'now':>6}")
    for name in READS:
        before, now = (statistics.median(times[name, way]) for way in WAYS)
        print(
            f"{name:<10}{before:>10.2f}{now:>10.2f}{before / now:>8.2f}"
            f"{queries[name, 'before']:>17}{queries[name, 'now']:>6}"
        )


if __name__ == "__main__":
    main()
