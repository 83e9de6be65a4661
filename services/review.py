"""Decisions on parked claim conflicts: exactly one decision per conflict, journalled.

A parked conflict is the stream `conflict-<id>`: ConflictParked at version 1, the decision at
version 2. Two reviewers deciding at once both append at expected version 1; the store lets
exactly one through and the other hears "already decided".

A decision commits the chosen value where the conflict says (its `commit`): a compare-and-swap
from the version the fact had when the conflict was parked, in the same transaction as the
decision. If the fact moved since, nothing is decided or committed (ConflictMoved): the reviewer
was looking at a world that no longer exists. The claims stay in the record, settled.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from desk.services import TableOrders
from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims
from runtime.coordination.facts import Facts
from runtime.events import ConflictParked, ConflictResolved, Event
from runtime.journal import WrongExpectedVersion
from teams.desk.services import STATUSES, OrderMoved

NONE = "none"  # the choice that rejects every claim


class ConflictError(Exception):
    """A decision on a conflict is refused as asked (a choice it does not offer, a value the
    target cannot hold); the message says why."""


class ConflictNotFound(ConflictError):
    def __init__(self, conflict_id: str) -> None:
        super().__init__(f"no parked conflict {conflict_id}")


class ConflictAlreadyDecided(ConflictError):
    def __init__(self, conflict_id: str) -> None:
        super().__init__(f"conflict {conflict_id} has already been decided")


class ConflictMoved(ConflictError):
    """The fact changed after the conflict was parked: the choice would overwrite that."""


def park(conflict: ConflictParked) -> None:
    """Put a conflict in the queue (the reconciler's last resort)."""
    DjangoJournal().append(f"conflict-{conflict.conflict_id}", [conflict], 0)
    projection.catch_up(["conflicts", "runs"])


def claim_choices(parked: ConflictParked) -> dict[str, Any]:
    """The values a reviewer may choose, by claim id (or index when a claim has no id)."""
    return {str(c.get("claim_id", i)): c.get("value") for i, c in enumerate(parked.claims)}


def resolve(
    conflict_id: str, choice: str, by: str, reason: str, using: str = "default"
) -> ConflictResolved:
    journal = DjangoJournal(using)
    events: list[Event] = [r.event for r in journal.read(f"conflict-{conflict_id}")]
    if not events or not isinstance(events[0], ConflictParked):
        raise ConflictNotFound(conflict_id)
    if len(events) > 1:
        raise ConflictAlreadyDecided(conflict_id)
    choices = claim_choices(events[0])
    if choice != NONE and choice not in choices:
        known = ", ".join([*choices, NONE])
        raise ConflictError(
            f"conflict {conflict_id} has no claim {choice!r}; choose one of {known}"
        )
    parked = events[0]
    value = None if choice == NONE else choices[choice]
    with transaction.atomic(using=using):
        # The commit first, then the decision: the same lock order as every other writer of
        # an order (its row, then the journal), so two of them cannot deadlock.
        committed = commit(parked, value, by, journal) if choice != NONE else None
        decision = ConflictResolved(
            run_id=parked.run_id,
            conflict_id=conflict_id,
            by=by,
            reason=reason,
            choice=choice,
            value=value,
            committed=committed,
        )
        try:
            journal.append(f"conflict-{conflict_id}", [decision], 1)
        except WrongExpectedVersion:
            raise ConflictAlreadyDecided(conflict_id) from None
        ids = list(choices)
        Claims(journal).settle(
            parked.subject,
            parked.predicate,
            choice,
            [i for i in ids if i != choice],
            f"reviewer {by}: {reason}",
            value,
            run_id=parked.run_id,
        )
    projection.catch_up(["conflicts", "runs"], using=using)
    return decision


def commit(
    parked: ConflictParked, value: Any, by: str, journal: DjangoJournal
) -> dict[str, Any] | None:
    """Write the chosen value by compare-and-swap where the conflict says; None if nowhere."""
    target = parked.commit
    if not target:
        return None
    service, version = target.get("service"), int(target.get("version", 0))
    if service == "orders":
        if parked.predicate != "status" or value not in STATUSES:
            raise ConflictError(f"{value!r} is not an order status ({', '.join(STATUSES)})")
        try:
            order = TableOrders(journal, journal.using).set_status(
                str(target["key"]), str(value), version, f"reviewer:{by}", parked.run_id
            )
        except OrderMoved as exc:
            raise ConflictMoved(
                f"{exc}. The conflict was parked at version {version}: look at the order again"
            ) from None
        return {"service": service, "key": target["key"], "version": order.version}
    if service == "facts":
        try:
            new = Facts(journal).write(
                parked.subject, parked.predicate, value, version, f"reviewer:{by}"
            )
        except WrongExpectedVersion as exc:
            raise ConflictMoved(
                f"{parked.subject} moved since the conflict was parked ({exc}): look again"
            ) from None
        return {"service": service, "key": parked.subject, "version": new}
    raise ConflictError(f"conflict {parked.conflict_id}: unknown commit target {service!r}")
