"""The review queues: dead letters and claim conflicts, and the decisions people take."""

from __future__ import annotations

from typing import Any, ClassVar

from runtime.events.base import Event

# --- the review queues: what rules could not decide goes to a person -------------------------


class DeadLettered(Event):
    """Work that cannot finish (retries spent, a deadline passed, a poison step), parked."""

    kind: ClassVar[str] = "DeadLettered"
    letter_id: str
    reason: str
    attempts: int = 1
    last_error: str = ""


class DeadLetterRetried(Event):
    """A person sent dead-lettered work back; it resumes from the journal."""

    kind: ClassVar[str] = "DeadLetterRetried"
    letter_id: str
    by: str
    reason: str = ""


class DeadLetterDiscarded(Event):
    kind: ClassVar[str] = "DeadLetterDiscarded"
    letter_id: str
    by: str
    reason: str


class ConflictParked(Event):
    """Two live claims on one fact that the rules could not reconcile."""

    kind: ClassVar[str] = "ConflictParked"
    conflict_id: str
    subject: str
    predicate: str
    conflict_type: str
    claims: list[dict[str, Any]]
    # Where a chosen value is committed, and from which version ({"service", "key",
    # "version"}): the decision is a compare-and-swap, refused if the fact moved since.
    commit: dict[str, Any] | None = None


class ConflictResolved(Event):
    """A person's ruling on a parked conflict: one claim's value, or none (`choice` "none")."""

    kind: ClassVar[str] = "ConflictResolved"
    conflict_id: str
    by: str
    reason: str
    choice: str
    value: Any = None
    committed: dict[str, Any] | None = None  # the fact's new version, when a value was committed
    # The ruling's id: its idempotency key at the mutation gate (the same ruling posted twice
    # is applied once). Empty in decisions recorded before rulings went through the gate.
    ruling_id: str = ""
