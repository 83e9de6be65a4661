"""A person's decision on a dead letter: retry the work, or discard it.

A dead letter is in the run's own stream (the harness parked a sub-task) or in its control
stream (a step kept dying: services/steps.py). Deciding one appends the decision beside it, at
the version the decider read, so two deciders race fairly: exactly one decision is written (the
loser reads again and finds the winner's; anything else written there meanwhile, a tag on the
run in its control stream, only makes the decider read again). Either way the run is driven
on; a discarded control letter ends the run, since nobody will drive that step again: its
verdict is written with the discard, in one transaction, and its trace's push queued
(services/traces.py) as a run's end does.

A run that has ended has no letter left to decide. The discard that ends it discards, in the
same transaction and saying why, every other letter of the run still open (stores from before
a parked run's step stopped at its letter hold runs with two): left open, the queue offered
work nobody would drive again, and a retry of it was taken, sending steps to a finished run
that diverged from its journal and dead-lettered it anew. A decision on a letter of a run
that has ended is refused (LetterOfAnEndedRun).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime import streams
from runtime.events import (
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    EventFormatError,
    TeamFinished,
)
from runtime.journal import Batch, WrongExpectedVersion
from services import ended, queue
from services.asked import shown
from services.runs import RunError

E = TypeVar("E", DeadLettered, DeadLetterRetried, DeadLetterDiscarded, TeamFinished)


class LetterError(RunError):
    """A decision on a dead letter is refused; the message says why."""


class LetterNotFound(LetterError):
    def __init__(self, letter_id: str) -> None:
        super().__init__(f"no dead letter {letter_id}")


class LetterAlreadyDecided(LetterError):
    """Somebody decided the letter first; the message says who and how."""

    def __init__(self, letter_id: str, decided: DeadLetterRetried | DeadLetterDiscarded) -> None:
        done = "retried" if isinstance(decided, DeadLetterRetried) else "discarded"
        super().__init__(
            f"dead letter {letter_id} has already been decided ({done} by {decided.by})"
        )


class LetterOfAnEndedRun(LetterError):
    """The letter's run has its verdict: nothing drives it any more, so nothing would act on a
    decision."""

    def __init__(self, letter_id: str, verdict: TeamFinished) -> None:
        run_id = verdict.run_id
        why = f"{verdict.status}: {verdict.reason}" if verdict.reason else verdict.status
        super().__init__(
            f"dead letter {letter_id} cannot be decided: its run {run_id} has ended ({why}) "
            f"and nothing drives it any more; to try the work again, fork the run (the Fork "
            f"form on its page, or POST /api/runs/{run_id}/fork)"
        )


class LetterMoved(LetterError):
    """The letter's stream moved between every read and the write, and nobody decided the
    letter: nothing was written."""

    def __init__(self, letter_id: str, attempts: int) -> None:
        super().__init__(
            f"dead letter {letter_id} is still undecided, but its run's stream changed before "
            f"each of {attempts} tries to write the decision; nothing was decided, try again"
        )


class LetterUnreadable(LetterError):
    """A row among the letter's stream's letters and decisions (or its run's verdicts) is one
    no event model reads (rewritten in the table): whether the letter is open cannot be told,
    so nothing is decided. The message names the row; the step has parked the run on a letter
    naming it too."""

    def __init__(self, letter_id: str, exc: EventFormatError) -> None:
        super().__init__(
            f"dead letter {letter_id} cannot be decided: whether it is still open cannot be "
            f"read ({exc}); mend the row first"
        )


def decide_letter(
    letter_id: str, decision: str, by: str, reason: str, catch_up: bool = True
) -> None:
    """Retry or discard a dead letter, as a journalled human decision. Raises LetterNotFound,
    LetterAlreadyDecided, LetterOfAnEndedRun, LetterMoved or LetterUnreadable, or LetterError
    for a decision that is neither. The read models are caught up after it unless `catch_up`
    is false (a decision on several catches up once, after the last)."""
    if decision not in DECISIONS:
        # Checked before anything is read: anything else would be taken as a discard.
        raise LetterError(f"a dead letter is retried or discarded, not {decision!r}")
    if not re.fullmatch(LETTER_ID, letter_id):
        # Before it is looked up: a 5,000-character id was quoted whole in "no dead letter".
        raise LetterError(f"{shown(letter_id)} is not a dead letter's id ({LETTER_ID_RULE})")
    run_id = letter_id.split(":", 1)[0]
    journal = DjangoJournal()
    control = ":control:" in letter_id
    stream = streams.control(run_id) if control else streams.journal(run_id)
    cls = DeadLetterRetried if decision == "retry" else DeadLetterDiscarded
    decided = cls(run_id=run_id, letter_id=letter_id, by=by, reason=reason)
    ends = decision == "discard" and control
    try:
        append_decision(journal, stream, decided, ends)
    except EventFormatError as exc:
        # Read before anything is written: it raised out of the request (a server error on
        # the queue's page) and stopped a decision on several at this letter.
        raise LetterUnreadable(letter_id, exc) from None
    if ends:
        # No step will end this run (the next one finds it finished and stops): what follows a
        # run's end happens here, as after a run's last step.
        ended.run_ended(run_id, ENDED)
    if catch_up:
        projection.catch_up()
    queue.advance(run_id)


def append_decision(
    journal: DjangoJournal,
    stream: str,
    decision: DeadLetterRetried | DeadLetterDiscarded,
    ends: bool = False,
) -> None:
    """Append the decision at the stream's version its letter was read open at; with `ends`
    (a discarded control letter), the run's verdict too, and a discard of each of its other
    letters still open, in the same transaction."""
    run_stream = streams.journal(decision.run_id)
    for _ in range(ATTEMPTS):
        # The versions read first: a decision written after them makes the append below fail.
        version = journal.version(stream)
        at = journal.version(run_stream) if ends else 0
        undecided(journal, decision.run_id, stream, decision.letter_id)
        batches: list[Batch] = [(stream, [decision], version)]
        if ends:
            # All or none: a discard written alone (the web process dying before the verdict)
            # left the run running, and its next step dead-lettered it again, undoing the
            # person's discard.
            batches = [
                (stream, [decision, *settled(journal, stream, decision)], version),
                (run_stream, [*settled(journal, run_stream, decision), finished(decision)], at),
            ]
        try:
            journal.append_batches(batches)
            return
        except WrongExpectedVersion:
            # A stream moved: a decision on this letter, or anything else written beside
            # it (a tag on the run, in its control stream). Only a decision found at the next
            # read refuses this one: the stream's moving alone said "already decided" of a
            # letter nobody had decided.
            continue
    raise LetterMoved(decision.letter_id, ATTEMPTS)


def undecided(journal: DjangoJournal, run_id: str, stream: str, letter_id: str) -> None:
    """Raise LetterNotFound or LetterAlreadyDecided unless the letter is there and open, and
    LetterOfAnEndedRun when its run has ended."""
    # Sought by kind: a harness's letter is in the run's own stream, however long it is.
    letters = events_of(journal, run_id, stream, DeadLettered)
    if not any(e.letter_id == letter_id for e in letters):
        raise LetterNotFound(letter_id)
    retried = events_of(journal, run_id, stream, DeadLetterRetried)
    discarded = events_of(journal, run_id, stream, DeadLetterDiscarded)
    decisions: list[DeadLetterRetried | DeadLetterDiscarded] = [*retried, *discarded]
    decided = next((e for e in decisions if e.letter_id == letter_id), None)
    if decided is not None:
        raise LetterAlreadyDecided(letter_id, decided)
    verdicts = events_of(journal, run_id, streams.journal(run_id), TeamFinished)
    if verdicts:
        raise LetterOfAnEndedRun(letter_id, verdicts[-1])


def settled(
    journal: DjangoJournal, stream: str, discard: DeadLetterDiscarded | DeadLetterRetried
) -> list[DeadLetterDiscarded]:
    """A discard, by whoever ends the run with `discard`, of each letter of `stream` still
    open besides the one `discard` decides."""
    run_id = discard.run_id
    decisions: list[DeadLetterRetried | DeadLetterDiscarded] = [
        *events_of(journal, run_id, stream, DeadLetterRetried),
        *events_of(journal, run_id, stream, DeadLetterDiscarded),
    ]
    decided = {e.letter_id for e in decisions}
    reason = f"its run ended when {discard.by} discarded {discard.letter_id}: {discard.reason}"
    return [
        DeadLetterDiscarded(run_id=run_id, letter_id=e.letter_id, by=discard.by, reason=reason)
        for e in events_of(journal, run_id, stream, DeadLettered)
        if e.letter_id not in decided and e.letter_id != discard.letter_id
    ]


ENDED = "escalated"  # the verdict of a run whose step's letter a person discarded
ATTEMPTS = 5  # reads of the letter before giving up, when its stream moved before each write
AT_ONCE = 100  # letters one request may decide: a queue's page shows 25
DECISIONS = ("retry", "discard")
# A letter's id: its run's id, then ":N" or ":control:N".
LETTER_ID = rf"{streams.RUN_ID.pattern}(?::[A-Za-z0-9_-]{{1,32}}){{1,2}}"
LETTER_ID_RULE = "its run's id, then ':' and a number, as in r-0123456789ab:2 or :control:1"


@dataclass
class Decided:
    """What became of each letter of a decision on several: decided, or refused and why."""

    decided: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


def decide_letters(letter_ids: Sequence[str], decision: str, by: str, reason: str) -> Decided:
    """The same decision, with the same reason, on each of `letter_ids`, one after the other:
    each is its own journalled decision, as if taken alone, so a letter somebody decided
    meanwhile (or that does not exist) is refused by itself and the others still go through.
    An id given twice is decided once. A decision that is neither is refused whole, before
    any letter is looked at."""
    if decision not in DECISIONS:
        raise LetterError(f"a dead letter is retried or discarded, not {decision!r}")
    wanted = list(dict.fromkeys(letter_ids))
    if len(wanted) > AT_ONCE:
        raise LetterError(f"at most {AT_ONCE} dead letters at once; {len(wanted)} were given")
    found = Decided()
    for letter_id in wanted:
        try:
            decide_letter(letter_id, decision, by, reason, catch_up=False)
        except LetterError as exc:
            found.refused[letter_id] = str(exc)
        else:
            found.decided.append(letter_id)
    projection.catch_up()
    return found


def events_of(journal: DjangoJournal, run_id: str, stream: str, cls: type[E]) -> list[E]:
    return [r.event for r in journal.of_kind(run_id, stream, cls.kind) if isinstance(r.event, cls)]


def finished(discard: DeadLetterRetried | DeadLetterDiscarded) -> TeamFinished:
    """The verdict a discarded infrastructure letter ends its run with: nobody will drive it
    again."""
    reason = f"discarded by {discard.by}: {discard.reason}"
    return TeamFinished(run_id=discard.run_id, status=ENDED, reason=reason)
