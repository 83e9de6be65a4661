"""A person changes their mind: superseding an intent, from the API or the command line.

The intent is the stream `intent-<id>`; a new version is appended on the version the person
saw, so two people superseding at once cannot both win, and nobody replaces a version they
never looked at. Runs holding the old version are refused at their next mutation by the
mutation gate (MutationRefused, check "intent", in their journal), not stopped mid-call. Every
team's run holds one: the desk's `ticket-<order>`, the others' `task-<run>`.

A run's own intent, `task-<run>`, is superseded only while the run may still act on it: once the
run is over (its verdict is in, or it was imported) nothing of it can change, and a new version
would only be read by its forks, whose work it would refuse (IntentOfAFinishedRun). A fork is how
a finished run's course changes; it carries its own intent, `task-<fork>` (runtime/fork.py).
"""

from __future__ import annotations

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import status, written
from runtime.coordination.gates import TASK, Intent, Intents
from runtime.events import IntentDeclared, shown
from runtime.journal import WrongExpectedVersion
from runtime.unseen import unseen_reason
from services.asked import named

STATEMENT_MAX = 2_000  # characters of what is wanted, and of why: as a task and a reason
PAGE_MAX = 1_000  # versions in one page of an intent's history (the API's limit)


class IntentError(Exception):
    pass


class IntentMissing(IntentError):
    def __init__(self, intent_id: str) -> None:
        super().__init__(
            f"no intent {named(intent_id)}: intents are declared by the runs that hold them"
        )


class IntentMoved(IntentError):
    def __init__(
        self, intent_id: str, based_on: int, current: int, latest: IntentDeclared | None = None
    ) -> None:
        # Only a version it has had can have been superseded since: one past it was never
        # read by anybody, and was said to have been. Who did, and to what, when it is known
        # (the person who came second was told only "somebody").
        since = (
            "somebody superseded it since you looked"
            if based_on < current
            else f"it has had no version {based_on}"
        )
        if based_on < current and latest is not None:
            since += (
                f" ({latest.by}, whose version {latest.intent_version} reads "
                f"{shown(latest.statement)}, for the reason {shown(latest.reason)})"
            )
        super().__init__(
            f"intent {intent_id} is at version {current}, not {based_on}: {since}; read it again"
        )
        self.current = current


class IntentOfAFinishedRun(IntentError):
    """The intent is a run's own task, and the run is over: nothing would serve a new version."""

    def __init__(self, intent_id: str, run_id: str, state: str) -> None:
        super().__init__(
            f"intent {intent_id} is run {run_id}'s task, and the run is over "
            f"({status.label(state)}): nothing it does can change now; to take a finished "
            f"run another way, fork it (the Fork form on its page, or POST "
            f"/api/runs/{run_id}/fork) and supersede the fork's own intent while it runs"
        )


def posted_again(
    latest: IntentDeclared, statement: str, by: str, reason: str, based_on: int | None
) -> bool:
    """Whether superseding with `statement` and `reason` by `by`, on `based_on` (None: on any
    version), is the latest version's supersession asked again: the same person's same words
    and reason, on the version that one superseded when a version is given. A run's own first
    version is its harness's statement, which no person wrote."""
    return (
        latest.intent_version > 1
        and (latest.by, latest.statement, latest.reason) == (by, statement, reason)
        and based_on in (None, latest.intent_version - 1)
    )


def page(
    intent_id: str, after: int = 0, limit: int = PAGE_MAX, using: str = "default"
) -> tuple[IntentDeclared, list[IntentDeclared]]:
    """The intent's current version and a page of its versions after version `after`
    (Intents.page: those records alone, not every version people declared)."""
    latest, found = Intents(DjangoJournal(using)).page(intent_id, after, limit)
    if latest is None:
        raise IntentMissing(intent_id)
    return latest, found


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
    # Words of only U+200B and the like pass "not blank" and show nothing where runs show them.
    if why := unseen_reason(statement.strip(), "statement", "say what is wanted now in words"):
        raise IntentError(why)
    if why := unseen_reason(reason.strip()):
        raise IntentError(why)
    for name, text in (("statement", statement), ("reason", reason)):
        if why := written.unwritten_reason(text, name):
            raise IntentError(why)
    for name, text in (("statement", statement), ("reason", reason)):
        if len(text.strip()) > STATEMENT_MAX:
            raise IntentError(
                f"the {name} is {len(text.strip()):,} characters; at most {STATEMENT_MAX:,}"
            )
    # The current version from the stream's last record (Intents.latest), not the count of
    # every version declared: a person superseding pays for one record, however many came.
    latest = Intents(DjangoJournal(using)).latest(intent_id)
    if latest is None:
        raise IntentMissing(intent_id)
    current = latest.intent_version
    if posted_again(latest, statement.strip(), by, reason.strip(), based_on):
        # The same person's same supersession, sent again (a retried request, a second click):
        # answered with the version it wrote. Written again it made another version that
        # changed nothing, and refused the runs that had taken the first at their next change;
        # sent again with the version it was based on, it was told somebody superseded it.
        return Intent(intent_id, latest.intent_version, latest.statement)
    if intent_id.startswith(TASK):
        run_id = intent_id.removeprefix(TASK)
        projection.catch_up(["runs"], using=using)  # its verdict, if it was just written
        found = RunSummary.objects.using(using).filter(run_id=run_id)
        state = found.values_list("status", flat=True).first()
        if state is not None and status.is_terminal(str(state)):
            raise IntentOfAFinishedRun(intent_id, run_id, str(state))
    if based_on is not None and based_on != current:
        raise IntentMoved(intent_id, based_on, current, latest)
    try:
        return Intents(DjangoJournal(using)).declare(
            intent_id, statement.strip(), by, reason.strip(), based_on=current
        )
    except WrongExpectedVersion as exc:
        now = Intents(DjangoJournal(using)).latest(intent_id)
        raise IntentMoved(intent_id, current, exc.actual, now) from None
