"""A conflict card's cost as its subject's claims stream grows, at 100 and 20,000 events.

A card shows which of the conflict's claims a ruling on another conflict settled since it was
parked (review.claims_now, through Claims.settled): once per card on the conflicts page (25 a
page), once per item of the API's list, once per ruling. The subject's claims stream is shared
by every run on it, so it grows with the subject's history.

    card      review.claims_now for one open conflict parked at the end of a claims stream of
              --sizes events (rounds of two runs' claims on the fact and a decision between
              them); one of its claims settled since by a ruling on another conflict.
    page      the conflicts page (in-process, Django's test client, a reviewer's) with 25
              such cards.
    since, settled
              the card of a conflict parked at the start of the stream and settled at once by
              a ruling on another conflict, the --sizes events coming after it.
    since, another fact
              the card of a conflict parked at the start of the stream, the --sizes events
              coming after it on another fact of the subject (their decisions are of the same
              kind, on another predicate), one of its claims settled at the end.

Each beside the same card read as it was before 2026-12-05 (the whole stream read, its
decisions after the conflict picked out in Python: "whole stream (before)"), in the same
process; with the journal rows each read turns into records.

Medians of --repeats rounds, the sizes taken in turns, and the ratio of the largest size's
figure to the smallest's. Production settings (DEBUG off); SQLite by default (WAL,
synchronous=FULL, a file in a temp dir), --postgres for a private PostgreSQL cluster with
fsync on, ANALYZEd after the load.

    PYTHONPATH=. .venv/bin/python bench/conflict_cards.py [--sizes 100,20000] [--postgres]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.services: the private PostgreSQL cluster

from bench.production_env import production_env  # noqa: E402
from tests.services import start_postgres  # noqa: E402

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--sizes", default="100,20000", help="claims stream lengths, comma separated")
PARSER.add_argument("--repeats", type=int, default=15, help="rounds (medians)")
PARSER.add_argument("--postgres", action="store_true", help="a private PostgreSQL, not SQLite")
PARSER.add_argument(
    "--others", type=int, default=200_000, help="other runs' events in the journal (100 a run)"
)
ARGS = PARSER.parse_args()
SIZES = [int(s) for s in ARGS.sizes.split(",")]

WORK = Path(tempfile.mkdtemp(prefix="minutes-bench-conflict-cards-"))
PG_URL = start_postgres(durable=True) if ARGS.postgres else None
if ARGS.postgres and not PG_URL:
    sys.exit("--postgres: PostgreSQL's initdb and pg_ctl are not installed")
os.environ.update(production_env(PG_URL or f"sqlite:///{WORK / 'bench.sqlite3'}", WORK / "home"))

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Permission  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

import journal_store.journal as stored  # noqa: E402
from journal_store import projection  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from journal_store.models import Conflict  # noqa: E402
from runtime.coordination.claims import Claims, claim_id  # noqa: E402
from runtime.events import ClaimAsserted, ClaimsReconciled, Event, RunStarted  # noqa: E402
from runtime.journal import Batch  # noqa: E402
from services import review  # noqa: E402

CARDS = 25  # a page's


def claim(subject: str, predicate: str, value: Any, based_on: int, by: str, run: str) -> Any:
    return ClaimAsserted(
        run_id=run,
        claim_id=claim_id(subject, predicate, by, value, based_on, run),
        subject=subject,
        predicate=predicate,
        value=value,
        based_on=based_on,
        source="model",
        by=by,
    )


def history(subject: str, predicate: str, count: int, start: int = 0) -> list[Event]:
    """`count` events of runs on the subject: each round two runs' claims from one version of
    the fact, and a decision between them."""
    events: list[Event] = []
    n = start
    while len(events) < count:
        run = f"r-h{n:06d}"
        a = claim(subject, predicate, "shipped", n, "order-agent", run)
        b = claim(subject, predicate, "cancelled", n, "support-agent", run)
        decided = ClaimsReconciled(
            run_id=run,
            subject=subject,
            predicate=predicate,
            winner=a.claim_id,
            losers=[b.claim_id],
            rule="source: state over model",
            value="shipped",
        )
        events += [a, b, decided]
        n += 1
    return events[:count]


def append(journal: DjangoJournal, stream: str, events: list[Event]) -> None:
    for start in range(0, len(events), 1_000):
        journal.append(stream, events[start : start + 1_000], journal.version(stream))


def park(journal: DjangoJournal, subject: str, n: int) -> list[ClaimAsserted]:
    """A conflict of two fresh claims on the subject's status, parked now; its claims."""
    run = f"r-c{n:03d}-{subject.rsplit('-', 1)[-1]}"
    pair = [
        claim(subject, "status", "shipped", 10_000_000 + n, "order-agent", run),
        claim(subject, "status", "cancelled", 10_000_000 + n, "support-agent", run),
    ]
    append(journal, Claims.stream(subject), pair)
    Claims(journal).park(subject, "status", pair, run)
    return pair


def seed(journal: DjangoJournal, size: int) -> dict[str, str]:
    """The subject of each shape at one size (see the module's doc)."""
    claims = Claims(journal)
    late, settled, other = (f"order:{shape}-{size}" for shape in ("late", "settled", "other"))
    append(journal, Claims.stream(late), history(late, "status", size))
    first = park(journal, late, 0)
    for n in range(1, CARDS):
        park(journal, late, n)
    claims.settle(late, "status", "none", [first[1].claim_id], "reviewer bea", None, "r-ruling")
    a, b = park(journal, settled, 0)
    claims.settle(settled, "status", a.claim_id, [b.claim_id], "reviewer ann", a.value, "r-ruling")
    append(journal, Claims.stream(settled), history(settled, "status", size, start=1))
    first = park(journal, other, 0)
    append(journal, Claims.stream(other), history(other, "refund", size))
    claims.settle(other, "status", "none", [first[1].claim_id], "reviewer bea", None, "r-ruling")
    return {"card": late, "since, settled": settled, "since, another fact": other}


SETTLED = {"card": 1, "since, settled": 2, "since, another fact": 1}  # the claims each finds


def others(journal: DjangoJournal, count: int) -> None:
    """`count` events of other runs, 100 a run, after the conflicts were parked: what a store
    holds beside its claims (a desk run writes two claims among its events). Without them the
    claims streams are most of the journal, and PostgreSQL's planner, from those statistics,
    walked the journal after the conflict by its primary key rather than the decisions' index
    (23.7 ms a card at 20,000 events, where the index takes under a millisecond)."""
    runs = [f"r-other{n:05d}" for n in range(count // 100)]
    for start in range(0, len(runs), 50):
        batches: list[Batch] = [
            (f"run-{run}", [RunStarted(run_id=run, agent="coder", task="t") for _ in range(100)], 0)
            for run in runs[start : start + 50]
        ]
        journal.append_batches(batches)


def whole_stream(conflict: Conflict) -> dict[str, ClaimsReconciled]:
    """Claims.settled as it was before 2026-12-06: every event of the stream read, the
    decisions after the conflict's position picked out in Python (the baseline)."""
    found: dict[str, ClaimsReconciled] = {}
    ids = set(review.claim_choices_of(conflict.claims))
    for rec in DjangoJournal().read(Claims.stream(conflict.subject)):
        e = rec.event
        if rec.position <= conflict.position or not isinstance(e, ClaimsReconciled):
            continue
        if e.predicate == conflict.predicate:
            for c in (e.winner, *e.losers):
                if c in ids:
                    found.setdefault(c, e)
    return found


def rows_read(work: Callable[[], Any]) -> int:
    """The journal rows `work` turned into records."""
    real, counted = stored.from_row, [0]

    def counting(row: Any) -> Any:
        counted[0] += 1
        return real(row)

    stored.from_row = counting
    try:
        work()
    finally:
        stored.from_row = real
    return counted[0]


def main() -> None:
    call_command("migrate", verbosity=0)
    journal = DjangoJournal()
    subjects: dict[int, dict[str, str]] = {}
    for size in SIZES:
        started = time.perf_counter()
        subjects[size] = seed(journal, size)
        print(f"seeded {size:,} claims events in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    others(journal, ARGS.others)
    print(f"appended {ARGS.others:,} events of other runs in {time.perf_counter() - started:.1f} s")
    projection.catch_up(["conflicts"])
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    user, _ = get_user_model().objects.get_or_create(username="bench")
    user.user_permissions.add(Permission.objects.get(codename="decide"))  # a reviewer's page
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)

    def card(subject: str) -> Conflict:
        return Conflict.objects.filter(subject=subject).order_by("position")[0]

    def page(subject: str) -> Any:
        return client.get("/review/conflicts", {"q": subject.split(":")[1]})

    shown = page(subjects[SIZES[-1]]["card"])
    assert shown.status_code == 200 and shown.content.count(b'name="choice"') >= CARDS * 2
    for size in SIZES:  # both ways find the decisions on the card's claims
        for shape, expected in SETTLED.items():
            c = card(subjects[size][shape])
            found = review.settled_since(c.subject, c.predicate, c.claims, c.position, "default")
            assert len(found) == expected and whole_stream(c) == found, (shape, size)
    figures: dict[str, Callable[[int], Callable[[], Any]]] = {}
    for shape in SETTLED:
        figures[shape] = lambda size, s=shape: partial(review.claims_now, card(subjects[size][s]))
        figures[f"{shape}: whole stream (before)"] = lambda size, s=shape: partial(
            whole_stream, card(subjects[size][s])
        )
        if shape == "card":
            figures["page of 25 cards"] = lambda size: partial(page, subjects[size]["card"])
    print(
        f"\n{connection.vendor}, in-process, medians of {ARGS.repeats} rounds, the sizes in "
        "turns; ms, and the journal rows one read turns into records"
    )
    head = "".join(f"{size:>10,}" for size in SIZES)
    print(f"{'claims stream events':<44}{head}{'ratio':>8}{'rows':>16}")
    for name, make in figures.items():
        works = {size: make(size) for size in SIZES}
        for work in works.values():
            work()  # warm
        times: dict[int, list[float]] = {size: [] for size in SIZES}
        for _ in range(ARGS.repeats):
            for size in SIZES:
                started = time.perf_counter()
                works[size]()
                times[size].append((time.perf_counter() - started) * 1000)
        medians = {size: statistics.median(times[size]) for size in SIZES}
        rows = "/".join(str(rows_read(works[size])) for size in SIZES)
        print(
            f"{name:<44}"
            + "".join(f"{medians[size]:>10.2f}" for size in SIZES)
            + f"{medians[SIZES[-1]] / medians[SIZES[0]]:>8.2f}{rows:>16}"
        )


if __name__ == "__main__":
    main()
