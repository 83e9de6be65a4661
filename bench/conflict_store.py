"""Open conflicts as the review queue shows them, with the journal their cards read: each one's
subject's facts and the decisions on its claims since it was parked; and the cards read one
conflict at a time, as they were before 2026-12-07.

What bench/conflict_page.py times the conflicts' page and API on, and what
tests/dashboard/test_a_page_of_conflicts_reads_the_same_at_any_count.py and
tests/dashboard/test_conflict_cards_read_together_show_what_each_read_alone.py count and
compare. Imported once Django is set up; it reads no arguments.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from desk.services import TableOrders
from journal_store.journal import DjangoJournal
from journal_store.models import Conflict
from runtime.coordination.claims import Claims
from runtime.coordination.facts import Facts
from runtime.events import ClaimsReconciled, ConflictParked
from services import commit_targets, review

PREDICATES = ("status", "amount_cents", "note")
VALUES = ("shipped", "cancelled", "delivered", "<b>held</b> & 'quoted'", 0, None, ["a", 1])


def park(
    journal: DjangoJournal,
    n: int,
    rng: random.Random,
    facts: int = 3,
    decisions: int = 3,
    subject: str | None = None,
    tag: str = "Q",
) -> None:
    """The `n`th conflict: two runs' claims on its subject's status (its own order's, or
    `subject`, which another conflict is on too), parked; up to `facts` changes of the
    subject's facts before it (of any predicate, so that some find the status far back or not
    at all) and up to `decisions` decisions on the subject's claims after it (another
    predicate's, or this conflict's claims settled by a ruling on another). One in three
    commits to a desk order (one in nine to an order this store does not hold), one in three
    to another subject's facts than its own, the others to its own. Its ids and its order's
    carry `tag`: another store's in the same journal has another."""
    claims = Claims(journal)
    subject = subject or f"order:{tag}-{n}"
    commit: dict[str, Any] | None = None
    if n % 3 == 0:
        key = f"{tag}-{n}" if n % 9 else f"gone-{tag}-{n}"
        if n % 9 and subject == f"order:{key}":  # the order's first fact, before any other
            TableOrders(journal).open(key, 1_000 + n, "paid", "desk")
        commit = {"service": "orders", "key": key, "version": 1}
    elif n % 3 == 1:
        commit = {"service": "facts", "key": f"order:{tag}-{n - 1}", "version": 0}
    for k in range(rng.randint(0, facts)):
        stream = Facts.stream(subject)
        Facts(journal).write(
            subject, rng.choice(PREDICATES), rng.choice(VALUES), journal.version(stream), f"w{k}"
        )
    made = [
        claims.claim(subject, "status", value, 0, by, "model", run_id=f"r-{tag}{n}-{by}")
        for value, by in ((rng.choice(VALUES[:4]), "order-agent"), ("cancelled", "support-agent"))
    ]
    review.park(
        ConflictParked(
            run_id=f"r-{tag}{n}",
            conflict_id=f"cf-{tag}-{n:05d}",
            subject=subject,
            predicate="status",
            conflict_type="value",
            claims=[
                {"claim_id": c.claim_id, "value": c.value, "agent": c.by, "run_id": c.run_id}
                for c in made
            ],
            commit=commit,
        )
    )
    for k in range(rng.randint(0, decisions)):
        ours = rng.random() < 0.3
        winner = made[0].claim_id if ours else f"cl-other-{tag}{n}-{k}"
        loser = made[1].claim_id if ours and rng.random() < 0.5 else f"cl-lost-{tag}{n}-{k}"
        predicate = "status" if ours or rng.random() < 0.5 else "amount_cents"
        claims.settle(subject, predicate, winner, [loser], f"rule {k}", "x", run_id=f"r-o{k}")


def build(
    count: int, rng: random.Random, facts: int = 3, decisions: int = 3, tag: str = "Q"
) -> None:
    """`count` open conflicts (`park`'s), one in five on the subject of the one before."""
    journal = DjangoJournal()
    for n in range(count):
        shared = f"order:{tag}-{n - 1}" if n % 5 == 4 else None
        park(journal, n, rng, facts, decisions, shared, tag)


class OneStream:
    """The database's journal without its reads of many streams at once (runtime/page_reads.
    py): asked of a page's cards, it reads each card's streams on their own, as the cards were
    read before 2026-12-07 (the version of a fact's stream then its windows; the decisions on
    a card's claims a page at a time)."""

    def __init__(self, journal: DjangoJournal) -> None:
        self.journal = journal

    def __getattr__(self, name: str) -> Any:
        if name in ("read_kinds", "read_backs"):
            raise AttributeError(name)
        return getattr(self.journal, name)


@contextmanager
def one_at_a_time() -> Iterator[None]:
    """Within it, the conflicts' cards are read one conflict at a time, each of its reads on
    its own, as before 2026-12-07: the journal without reads of many streams, and each desk
    order read alone."""
    kept_journal, kept_many = review.DjangoJournal, dict(commit_targets.MANY_READERS)
    review.DjangoJournal = lambda using="default": OneStream(kept_journal(using))
    commit_targets.MANY_READERS.clear()
    try:
        yield
    finally:
        review.DjangoJournal = kept_journal
        commit_targets.MANY_READERS.update(kept_many)


def settled_wholly(conflict: Conflict) -> dict[str, ClaimsReconciled]:
    """The first decision after the conflict's parking to settle each of its claims, from the
    subject's whole claims stream: Claims.settled as it was before 2026-12-06, every event of
    the stream read and the decisions after the conflict's position picked out in Python (the
    baseline bench/conflict_cards.py times, the oracle the cards are tested against)."""
    found: dict[str, ClaimsReconciled] = {}
    keys = review.claim_choices_of(conflict.claims)
    for rec in DjangoJournal().read(Claims.stream(conflict.subject)):
        e = rec.event
        if not isinstance(e, ClaimsReconciled) or rec.position <= conflict.position:
            continue
        if e.predicate == conflict.predicate:
            for key in (e.winner, *e.losers):
                if key in keys:
                    found.setdefault(key, e)
    return found
