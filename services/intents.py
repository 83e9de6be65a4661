"""A person changes their mind: superseding an intent, from the API or the command line.

The intent is the stream `intent-<id>`; a new version is appended on the version the person
saw, so two people superseding at once cannot both win, and nobody replaces a version they
never looked at. Runs holding the old version are refused at their next mutation by the
mutation gate (MutationRefused, check "intent", in their journal), not stopped mid-call. Every
team's run holds one: the desk's `ticket-<order>`, the others' `task-<run>`.
"""

from __future__ import annotations

from journal_store.journal import DjangoJournal
from runtime.coordination.gates import Intent, Intents
from runtime.events import IntentDeclared
from runtime.journal import WrongExpectedVersion

STATEMENT_MAX = 2_000  # characters of what is wanted, and of why: as a task and a reason


class IntentError(Exception):
    pass


class IntentMissing(IntentError):
    def __init__(self, intent_id: str) -> None:
        super().__init__(f"no intent {intent_id}: intents are declared by the runs that hold them")


class IntentMoved(IntentError):
    def __init__(self, intent_id: str, based_on: int, current: int) -> None:
        # Only a version it has had can have been superseded since: one past it was never
        # read by anybody, and was said to have been.
        since = (
            "somebody superseded it since you looked"
            if based_on < current
            else f"it has had no version {based_on}"
        )
        super().__init__(
            f"intent {intent_id} is at version {current}, not {based_on}: {since}; read it again"
        )
        self.current = current


def history(intent_id: str, using: str = "default") -> list[IntentDeclared]:
    found = Intents(DjangoJournal(using)).history(intent_id)
    if not found:
        raise IntentMissing(intent_id)
    return found


def supersede(
    intent_id: str,
    statement: str,
    by: str,
    reason: str,
    based_on: int | None = None,
    using: str = "default",
) -> Intent:
    """A new version of an existing intent. `based_on` omitted means "whatever it is now"."""
    if not statement.strip():
        raise IntentError("a superseding intent needs a statement of what is wanted now")
    if not reason.strip():
        raise IntentError("superseding an intent needs a reason: the runs it stops will show it")
    for name, text in (("statement", statement), ("reason", reason)):
        if len(text.strip()) > STATEMENT_MAX:
            raise IntentError(
                f"the {name} is {len(text.strip()):,} characters; at most {STATEMENT_MAX:,}"
            )
    current = len(history(intent_id, using))
    if based_on is not None and based_on != current:
        raise IntentMoved(intent_id, based_on, current)
    try:
        return Intents(DjangoJournal(using)).declare(
            intent_id, statement.strip(), by, reason.strip(), based_on=current
        )
    except WrongExpectedVersion as exc:
        raise IntentMoved(intent_id, current, exc.actual) from None
