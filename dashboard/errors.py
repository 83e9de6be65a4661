"""Which HTTP status answers each refusal, by its type: one table for the pages and the API.

The services raise typed errors where they find the condition (`services.runs`,
`services.letters`, `services.review`, `services.intents`); nothing here reads an error's
message. A type not listed answers as its nearest listed base class does.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.management.base import CommandError

from config.commandline import refused, said
from runtime.events import EventFormatError
from services import baseline, conflict_errors, forks, intents, letters, runs, tags

REFUSALS: dict[type[Exception], int] = {
    # Asked of something that is not there.
    runs.RunNotFound: 404,
    baseline.BaselineNotFound: 404,
    letters.LetterNotFound: 404,
    conflict_errors.ConflictNotFound: 404,
    intents.IntentMissing: 404,
    # There, but what it has become says no (decided, finished, moved since it was read).
    runs.RunFinished: 409,
    runs.NothingToChange: 409,  # a resume of a driven run, a second stop, either on a letter
    runs.RunNotResumable: 409,
    runs.ReplayTooLong: 409,  # longer than a web request replays; the message says how
    baseline.NoBaseline: 409,  # a solo run, a team with no repository, a baseline itself
    letters.LetterAlreadyDecided: 409,
    letters.LetterMoved: 409,  # its stream changed before each write; nothing decided
    letters.LetterOfAnEndedRun: 409,  # nothing drives its run any more; a fork is the way
    letters.LetterUnreadable: 409,  # a row of its stream no event model reads; named
    conflict_errors.ConflictAlreadyDecided: 409,
    conflict_errors.ConflictMoved: 409,
    conflict_errors.ClaimSettled: 409,  # another conflict's ruling settled the claim since
    conflict_errors.ClaimsMoved: 409,  # the claims kept changing at every check; nothing decided
    # the mutation gate said no (a stale ruling is ConflictMoved too)
    conflict_errors.RulingRefused: 409,
    conflict_errors.UnknownCommitTarget: 409,  # its target's app is not installed here
    intents.IntentMoved: 409,
    intents.IntentOfAFinishedRun: 409,  # a fork is how a finished run's course changes
    forks.ForkCollided: 409,  # another writer took the new fork's stream; nothing written
    forks.ForkOfUnreadable: 409,  # its settings do not validate, as replay and baseline say
    runs.KeyTaken: 409,  # the key names a run not this person's (imported, another's)
    tags.TagsMoved: 409,  # the run's tags changed before each write; nothing changed
    # A row of the run's journal no event model reads (rewritten in the table): what reads it
    # whole (an export, a replay, a fork's copy, a resume) cannot; the message names the row.
    EventFormatError: 409,
    # Asked rightly, of something this installation cannot serve now (the local model's
    # server is not running; the message says how to start it).
    runs.ModelUnavailable: 503,
    # The database did not take a write (busy past its timeout, read-only, full); nothing of
    # it was written, and the same request may go through later.
    forks.ForkNotWritten: 503,
    # Asked too often: the person has as many live runs as one may (settings.RUNS_PER_PERSON).
    runs.AtCapacity: 429,
    # Not for this person.
    PermissionDenied: 403,
    conflict_errors.RulingNotAllowed: 403,
    # Asked wrongly: the settings, the choice or the statement do not hold.
    runs.RunError: 400,
    conflict_errors.ConflictError: 400,
    intents.IntentError: 400,
}


def unreadable(exc: EventFormatError) -> str:
    """What a page says when the run's journal cannot be read whole."""
    return f"this run's journal cannot be read whole, so it cannot be done: {exc}"


def status_for(exc: Exception) -> int:
    """The status of the nearest class of `exc` in REFUSALS (its own first)."""
    for cls in type(exc).__mro__:
        if cls in REFUSALS:
            return REFUSALS[cls]
    raise LookupError(f"{type(exc).__name__} is not a refusal the dashboard answers")


def for_command(exc: Exception) -> CommandError:
    """A refusal as a management command says it: exit status 2 for what the person asked
    wrongly or of something not there or not so (a 4xx here), 1 for what this installation
    cannot serve now (a 5xx: the local model's server is not running), which is no bad input."""
    if status_for(exc) >= 500:
        return CommandError(said(str(exc)))
    return refused(str(exc))
