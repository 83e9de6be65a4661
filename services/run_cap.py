"""How many of one person's runs may be live at once (settings.RUNS_PER_PERSON), and the lock
that makes a start's count and its run's first event one step.

Live: a run whose summary's status is running (stalled included), interrupted or dead-lettered.
Each may spend on a model again without anybody starting a run: a step is on its way, a person
may resume it, a letter's retry drives it on. A run over (any verdict, one waiting on a person's
decision on its conflict, one imported) holds no place. An interrupted run keeps its place: if
a stop freed it, a person could start, stop, start again and resume them all at once.

What takes a place: every new run a person begins, each asked under their lock with its first
events' append (services.runs.make_room): a start (a run asked with its baseline takes two), a
fork (services/forks.py), a baseline asked on its own or begun by a keyed start sent again
(services/baseline.py). What does not: a resume and a dead letter's retry (or a discard that
drives the run on without that work) begin no run; the run they drive on is interrupted or
dead-lettered, live already and counted, so they go at the cap, which says to resume or end
one to go on. A keyed start or fork sent again is answered the run it began: no place.

The cap is the same for staff and superusers: a run costs the same whoever starts it, and a
signed-in session or token that is not its owner's spends the most under the largest rights.
An operator who needs more raises the setting (or sets 0: no cap).

Race: two starts by one person at cap-1 must not both pass. The count and the append of the
run's TeamStarted happen under one lock per person (`one_start_at_a_time`), and the count is
taken after the projector has caught up with the journal (so a run another start appended,
committed before the lock came to this one, is in the summaries counted):

- PostgreSQL: a session-level advisory lock on (LOCK_SPACE, hashtext(person)), held from
  before the catch-up to after the append has committed (the append is its own transaction).
  Inside a caller's transaction, the transaction-level lock, held until that commits. Two
  people whose names hash alike share a lock: their starts wait on each other, no more.
- SQLite: one transaction around both; it begins IMMEDIATE (config/env.py), so it is the only
  writer until it commits, and no other start can count in between.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import DatabaseError, connections, transaction
from django.db.models import QuerySet

from journal_store.models import RunSummary
from runtime import status

LIVE: tuple[str, ...] = (status.RUNNING, status.INTERRUPTED, status.DEAD_LETTERED)
SHOWN = 3  # live runs a refusal names (the oldest): enough to find one, short to read
LOCK_SPACE = 0x4D52  # "MR": the first key of the per-person advisory locks (int4)


@dataclass(frozen=True)
class Live:
    """A person's live runs at a refusal: how many, and the oldest few's ids."""

    count: int
    oldest: list[str]


def live_runs(person: str) -> QuerySet[RunSummary]:
    """`person`'s live runs: a seek on the summaries' (started_by, status) index (0046)."""
    return RunSummary.objects.filter(started_by=person, status__in=LIVE)


def full(person: str, cap: int, places: int = 1) -> Live | None:
    """`person`'s live runs when `places` more would take them past `cap`, else None (always
    None for cap 0: no cap). Read the summaries as they stand: catch them up first."""
    if cap <= 0:
        return None
    found = live_runs(person)
    count = found.count()
    if count + places <= cap:
        return None
    oldest = found.order_by("started_at", "run_id").values_list("run_id", flat=True)[:SHOWN]
    return Live(count, list(oldest))


@contextlib.contextmanager
def one_start_at_a_time(person: str, using: str = "default") -> Iterator[None]:
    """While held, no other start by `person` counts or appends (see the module's doc)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        with transaction.atomic(using=using):
            yield
        return
    key: list[int | str] = [LOCK_SPACE, person]
    if connection.in_atomic_block:
        # The caller's transaction commits the run's first event: held until it does.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", key)
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", key)
    try:
        yield
    finally:
        # A connection that broke took its session's lock with it: nothing left to let go.
        with contextlib.suppress(DatabaseError), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", key)
