"""Decisions on parked claim conflicts: exactly one decision per conflict, journalled.

A parked conflict is the stream `conflict-<id>`: ConflictParked at version 1, the decision at
version 2. Two reviewers deciding at once both append at expected version 1; the store lets
exactly one through and the other hears "already decided".
"""

from __future__ import annotations

from typing import Any

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import ConflictParked, ConflictResolved, Event
from runtime.journal import WrongExpectedVersion

NONE = "none"  # the choice that rejects every claim


class ConflictError(Exception):
    pass


class ConflictAlreadyDecided(ConflictError):
    def __init__(self, conflict_id: str) -> None:
        super().__init__(f"conflict {conflict_id} has already been decided")


def park(conflict: ConflictParked) -> None:
    """Put a conflict in the queue (the reconciler's last resort)."""
    DjangoJournal().append(f"conflict-{conflict.conflict_id}", [conflict], 0)
    projection.catch_up(["conflicts", "runs"])


def claim_choices(parked: ConflictParked) -> dict[str, Any]:
    """The values a reviewer may choose, by claim id (or index when a claim has no id)."""
    return {str(c.get("claim_id", i)): c.get("value") for i, c in enumerate(parked.claims)}


def resolve(conflict_id: str, choice: str, by: str, reason: str) -> ConflictResolved:
    journal = DjangoJournal()
    events: list[Event] = [r.event for r in journal.read(f"conflict-{conflict_id}")]
    if not events or not isinstance(events[0], ConflictParked):
        raise ConflictError(f"no parked conflict {conflict_id}")
    if len(events) > 1:
        raise ConflictAlreadyDecided(conflict_id)
    choices = claim_choices(events[0])
    if choice != NONE and choice not in choices:
        known = ", ".join([*choices, NONE])
        raise ConflictError(
            f"conflict {conflict_id} has no claim {choice!r}; choose one of {known}"
        )
    decision = ConflictResolved(
        run_id=events[0].run_id,
        conflict_id=conflict_id,
        by=by,
        reason=reason,
        choice=choice,
        value=None if choice == NONE else choices[choice],
    )
    try:
        journal.append(f"conflict-{conflict_id}", [decision], 1)
    except WrongExpectedVersion:
        raise ConflictAlreadyDecided(conflict_id) from None
    projection.catch_up(["conflicts", "runs"])
    return decision
