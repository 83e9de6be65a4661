"""What the review queues' and the intents' endpoints take and give (dashboard/api/review.py,
intents.py): dead letters, conflicts and the decisions on them, an intent and its
supersession. Every decision says why (`Reason`), as the pages ask. The bodies shared by every
endpoint (`In`, `Error`) are in schemas.py."""

# No `from __future__ import annotations` here: django-ninja reads the annotations at runtime
# to build its models, and a Literal left as a string makes them unusable.

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Field, Schema
from pydantic import AfterValidator, StringConstraints
from pydantic_core import PydanticCustomError

from dashboard import actions
from dashboard.api.schemas import In
from journal_store.models import Conflict
from runtime import written
from runtime.unseen import unseen_reason
from services import intents, letters, review

# --- review queues ------------------------------------------------------------------------------


def seen_reason(text: str) -> str:
    """A decision's reason shows something and holds no control character, as the pages ask
    (runtime/unseen.py, runtime/written.py)."""
    if why := unseen_reason(text) or written.unwritten_reason(text):
        raise PydanticCustomError("reason", "{why}", {"why": why})
    return text


# A decision on a review item says why, as the pages ask: blank, whitespace or characters that
# draw nothing (U+200B) are refused (422, naming the field) before anything is journalled.
Reason = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=actions.REASON_MAX),
    AfterValidator(seen_reason),
]


class DecisionIn(In):
    reason: Reason = Field(description="why: recorded in the audit trail with your name")


class ResolveIn(In):
    choice: str = Field(
        max_length=64,  # the form's (dashboard/forms.ResolveForm)
        description="the claim that stands: one of the conflict's claim ids (`claims[].claim_id`),"
        ' or "none" to reject them all',
    )
    reason: Reason = Field(description="why: recorded in the audit trail with your name")
    ruling_id: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="the ruling's id, its idempotency key: the same ruling posted again is "
        "applied once (default: derived from the conflict, the choice and you)",
    )


class QueueTimes(Schema):
    """When a queue's item was opened and decided, and where in the journal."""

    position: int = Field(
        description="the journal position of the event that opened it: items opened later "
        "have higher ones (ask again with `after` the highest seen)"
    )
    created_at: datetime = Field(description="when it was opened")
    decided_at: datetime | None = Field(description="when a person decided it (null: open)")


class LetterOut(QueueTimes):
    letter_id: str
    run_id: str
    task_id: str | None
    reason: str
    attempts: int
    last_error: str
    status: str
    decided_by: str
    decision_reason: str


LetterId = Annotated[str, StringConstraints(pattern=f"^{letters.LETTER_ID}$")]


class LettersIn(In):
    letters: list[LetterId] = Field(
        min_length=1,
        max_length=letters.AT_ONCE,
        description=f"the dead letters' ids (at most {letters.AT_ONCE}); one given twice is "
        "decided once",
    )
    decision: Literal["retry", "discard"]
    reason: Reason = Field(description="why: recorded in each letter's audit trail, your name")


class RefusedOut(Schema):
    letter_id: str
    detail: str = Field(description="why it was not decided (decided already, by whom; none)")


class LettersOut(Schema):
    decided: list[LetterOut] = Field(description="the letters decided now, as they stand")
    refused: list[RefusedOut] = Field(description="the letters left as they were, and why")


class CurrentOut(Schema):
    value: Any = Field(description="the value the fact holds now (null when not `known`)")
    version: int
    by: str = Field(description="who set it (empty when not recorded)")
    known: bool = Field(description="false: the target holds no value for the predicate yet")


class ConflictOut(QueueTimes):
    conflict_id: str
    run_id: str
    subject: str
    predicate: str
    conflict_type: str
    claims: list[dict[str, Any]] = Field(
        description="the claims as parked, each with the run that made it (`run_id`: the "
        "claims on a subject are shared by the runs on it, so a conflict may hold another "
        "run's) and `settled`: null, or, while the conflict is open, the ruling on another "
        "conflict that settled the claim since this one was parked (its `run_id`, `rule`, "
        "and `won`); a settled claim is not among `choices`"
    )
    choices: list[str] = Field(
        description="what a ruling may choose now: the ids of the claims not settled, and "
        "'none' (reject every claim); empty once decided"
    )
    commit: dict[str, Any] | None = Field(
        description="where a chosen value is committed, by compare-and-swap from `version`"
    )
    current: CurrentOut | None = Field(
        None,
        description="what the fact holds now, read where `commit` says, as the queue's page "
        "shows beside the claims: while it is open, a `version` other than `commit.version` "
        "means the fact moved since the conflict was parked, and committing a claim is "
        "refused (rejecting both is not); None: nothing holds it here",
    )
    status: str
    resolution: dict[str, Any] | None
    decided_by: str
    decision_reason: str

    @staticmethod
    def resolve_claims(item: Conflict) -> list[dict[str, Any]]:
        return card_of(item).claims

    @staticmethod
    def resolve_choices(item: Conflict) -> list[str]:
        return card_of(item).choices

    @staticmethod
    def resolve_current(item: Conflict) -> CurrentOut | None:
        found = card_of(item).current
        return None if found is None else CurrentOut(**vars(found))


def with_cards(items: Sequence[Conflict]) -> None:
    """The cards of a page of conflicts (review.cards_of), read for all of them at once and
    kept on each item for its fields, as the queue's page reads them."""
    for item, card in zip(items, review.cards_of(items), strict=True):
        item.__dict__["_card"] = card


def card_of(item: Conflict) -> review.Card:
    """The item's card, read once for its three fields: the page's (`with_cards`), or its
    own for a conflict answered alone (a ruling's answer)."""
    if "_card" not in item.__dict__:
        with_cards([item])
    card: review.Card = item.__dict__["_card"]
    return card


# --- intents ------------------------------------------------------------------------------------


class IntentVersionOut(Schema):
    version: int
    statement: str
    by: str
    reason: str
    at: datetime


class IntentOut(Schema):
    intent_id: str
    version: int = Field(description="the current version; work held under an older one is stale")
    statement: str
    history: list[IntentVersionOut] = Field(
        description="a page of its versions, oldest first (`after`, `limit`)"
    )
    next: int | None = Field(
        None, description="the next page's `after`: the last version shown; null on the last page"
    )


def seen_statement(text: str) -> str:
    """An intent's statement shows something and holds no control character, as its reason
    must (runtime/unseen.py, runtime/written.py)."""
    if why := unseen_reason(
        text, "statement", "say what is wanted now in words"
    ) or written.unwritten_reason(text, "statement"):
        raise PydanticCustomError("statement", "{why}", {"why": why})
    return text


class SupersedeIn(In):
    statement: Annotated[str, AfterValidator(seen_statement)] = Field(
        min_length=1, max_length=intents.STATEMENT_MAX, description="what is wanted now"
    )
    reason: Reason = Field(description="why: the runs it stops will show it")
    version: int | None = Field(
        None, ge=1, description="the version you read; 409 when it has moved since (omit: any)"
    )
