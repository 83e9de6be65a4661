"""The review queues, each described once: which event opens an item, which events decide it
and with what outcome, and the row it is kept in.

One projector keeps every queue (projection.QueueProjector), and the pages and the API list
every queue the same way (dashboard/queries.py): adding a queue is adding a `Queue` here and a
model beside the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import F, QuerySet

from journal_store.models import Conflict, DeadLetter, QueueItem
from journal_store.substrings import RUNS, Searched
from journal_store.unindexed import Unindexed
from runtime.events import (
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    Event,
)

OPEN = "open"


@dataclass(frozen=True)
class Queue:
    """A review queue: items `opens` opens, kept as rows of `model` keyed by `key` (a field of
    the model and of every event about the item), and decided by one of `decisions`."""

    name: str  # the projector's name (its checkpoint's)
    model: type[QueueItem]
    words: tuple[str, ...]  # the columns a search of the queue looks in
    key: str
    opens: type[Event]
    fields: Callable[[Any], dict[str, Any]]  # an opened item's own columns, from its event
    # Per deciding event: its outcome (the item's status) and any columns of its own.
    decisions: Mapping[type[Event], tuple[str, Callable[[Any], dict[str, Any]]]]

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of event the queue reads."""
        return (self.opens.kind, *(cls.kind for cls in self.decisions))

    @property
    def searched(self) -> Searched:
        """Its searched columns, served by an index of their trigrams (substrings.py)."""
        return Searched(self.model._meta.db_table, self.key, self.words)

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The statuses a decided item can have."""
        return tuple(dict.fromkeys(outcome for outcome, _ in self.decisions.values()))


def nothing(event: Any) -> dict[str, Any]:
    return {}


DEAD_LETTERS = Queue(
    name="dead_letters",
    model=DeadLetter,
    words=("reason", "last_error", "letter_id"),
    key="letter_id",
    opens=DeadLettered,
    fields=lambda e: {
        "task_id": e.task_id,
        "reason": e.reason,
        "attempts": e.attempts,
        "last_error": e.last_error,
    },
    decisions={
        DeadLetterRetried: ("retried", nothing),
        DeadLetterDiscarded: ("discarded", nothing),
    },
)

CONFLICTS = Queue(
    name="conflicts",
    model=Conflict,
    words=("subject", "predicate", "conflict_id"),
    key="conflict_id",
    opens=ConflictParked,
    fields=lambda e: {
        "subject": e.subject,
        "predicate": e.predicate,
        "conflict_type": e.conflict_type,
        "claims": e.claims,
        "commit": e.commit,
        "resolution": None,
    },
    decisions={
        ConflictResolved: (
            "resolved",
            lambda e: {
                "resolution": {"choice": e.choice, "value": e.value, "committed": e.committed}
            },
        )
    },
)

QUEUES: tuple[Queue, ...] = (DEAD_LETTERS, CONFLICTS)
# Every table a search looks in: the runs and each queue, whose copies the beat tidies
# (services/indexes.py) and a rebuild of the views makes compact (substrings.compact).
SEARCHED: tuple[Searched, ...] = (RUNS, *(queue.searched for queue in QUEUES))


def oldest_open(queue: Queue, items: QuerySet[Any] | None = None) -> QueueItem | None:
    """The open item of `items` (a queue's rows narrowed to a run or to runs; the whole queue
    when None) that has waited longest for a person: opened first, by its event's time.

    A seek in the index of the status, the time and the position (migration 0041), where the
    open items were sorted at every page: few as people decide them, but 3,000 of 20,000 in
    the runs list's bench made the queue's page of its open items grow with them."""
    rows = queue.model._default_manager.all() if items is None else items
    return rows.filter(status=OPEN).order_by("created_at", "position").first()


def oldest_open_of(items: QuerySet[Any], runs: Sequence[str] | QuerySet[Any]) -> QueueItem | None:
    """The open item of `items` whose run is one of `runs` (run ids, or a query of them) that has
    waited longest, as `oldest_open`, for a few runs: each run's items read by the index of
    the run id, where SQLite took the index of the status and the time, which gives the order,
    and walked every open item oldest first to find one of them."""
    rows = items.filter(run_id__in=runs).alias(open_=Unindexed(F("status"))).filter(open_=OPEN)
    found: QueueItem | None = rows.order_by("created_at", "position").first()
    return found
