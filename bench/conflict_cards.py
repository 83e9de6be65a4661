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

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench import streams_setup  # noqa: E402
from bench.production_env import setup  # noqa: E402

ARGS = streams_setup.parser(__doc__, "100,20000", "claims stream lengths", others=True).parse_args()
SIZES = streams_setup.sizes_of(ARGS.sizes)
setup("conflict-cards", ARGS.postgres)

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Permission  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from bench import conflict_store  # noqa: E402
from journal_store import projection  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from journal_store.models import Conflict  # noqa: E402
from runtime.coordination.claims import Claims, claim_id  # noqa: E402
from runtime.events import ClaimAsserted, ClaimsReconciled, Event  # noqa: E402
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


def park(journal: DjangoJournal, subject: str, n: int) -> list[ClaimAsserted]:
    """A conflict of two fresh claims on the subject's status, parked now; its claims."""
    run = f"r-c{n:03d}-{subject.rsplit('-', 1)[-1]}"
    pair = [
        claim(subject, "status", "shipped", 10_000_000 + n, "order-agent", run),
        claim(subject, "status", "cancelled", 10_000_000 + n, "support-agent", run),
    ]
    streams_setup.append(journal, Claims.stream(subject), pair)
    Claims(journal).park(subject, "status", pair, run)
    return pair


def seed(journal: DjangoJournal, size: int) -> dict[str, str]:
    """The subject of each shape at one size (see the module's doc)."""
    claims = Claims(journal)
    late, settled, other = (f"order:{shape}-{size}" for shape in ("late", "settled", "other"))
    streams_setup.append(journal, Claims.stream(late), history(late, "status", size))
    first = park(journal, late, 0)
    for n in range(1, CARDS):
        park(journal, late, n)
    claims.settle(late, "status", "none", [first[1].claim_id], "reviewer bea", None, "r-ruling")
    a, b = park(journal, settled, 0)
    claims.settle(settled, "status", a.claim_id, [b.claim_id], "reviewer ann", a.value, "r-ruling")
    streams_setup.append(journal, Claims.stream(settled), history(settled, "status", size, start=1))
    first = park(journal, other, 0)
    streams_setup.append(journal, Claims.stream(other), history(other, "refund", size))
    claims.settle(other, "status", "none", [first[1].claim_id], "reviewer bea", None, "r-ruling")
    return {"card": late, "since, settled": settled, "since, another fact": other}


SETTLED = {"card": 1, "since, settled": 2, "since, another fact": 1}  # the claims each finds


def main() -> None:
    call_command("migrate", verbosity=0)
    journal = DjangoJournal()
    subjects: dict[int, dict[str, str]] = {}
    for size in SIZES:
        started = time.perf_counter()
        subjects[size] = seed(journal, size)
        print(f"seeded {size:,} claims events in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    streams_setup.others(journal, ARGS.others)
    print(f"appended {ARGS.others:,} events of other runs in {time.perf_counter() - started:.1f} s")
    projection.catch_up(["conflicts"])
    streams_setup.analyze()
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
            wholly = conflict_store.settled_wholly(c)
            assert len(found) == expected and wholly == found, (shape, size)
    figures: dict[str, Callable[[int], Callable[[], Any]]] = {}
    for shape in SETTLED:
        figures[shape] = lambda size, s=shape: partial(review.claims_now, card(subjects[size][s]))
        figures[f"{shape}: whole stream (before)"] = lambda size, s=shape: partial(
            conflict_store.settled_wholly, card(subjects[size][s])
        )
        if shape == "card":
            figures["page of 25 cards"] = lambda size: partial(page, subjects[size]["card"])
    print(
        f"\n{connection.vendor}, in-process, medians of {ARGS.repeats} rounds, the sizes in "
        "turns; ms, and the journal rows one read turns into records"
    )
    streams_setup.table(figures, SIZES, ARGS.repeats, "claims stream events", 44)


if __name__ == "__main__":
    main()
