"""A person's decision on a dead letter: retry the work, or discard it.

A dead letter is in the run's own stream (the harness parked a sub-task) or in its control
stream (a step kept dying: services/steps.py). Deciding one appends the decision beside it, at
the version the decider read, so two deciders race fairly: exactly one decision is written.
Either way the run is driven on; a discarded control letter ends the run, since nobody will
drive that step again, and queues its trace's push (services/traces.py) as a run's end does.
"""

from __future__ import annotations

from typing import TypeVar

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime import streams
from runtime.events import DeadLetterDiscarded, DeadLettered, DeadLetterRetried, TeamFinished
from runtime.journal import WrongExpectedVersion
from services import ended, queue
from services.runs import RunError

E = TypeVar("E", DeadLettered, DeadLetterRetried, DeadLetterDiscarded)


class LetterError(RunError):
    """A decision on a dead letter is refused; the message says why."""


class LetterNotFound(LetterError):
    def __init__(self, letter_id: str) -> None:
        super().__init__(f"no dead letter {letter_id}")


class LetterAlreadyDecided(LetterError):
    """Somebody decided the letter first; when their decision was read, the message says who
    and how."""

    def __init__(
        self, letter_id: str, decided: DeadLetterRetried | DeadLetterDiscarded | None = None
    ) -> None:
        how = ""
        if decided is not None:
            done = "retried" if isinstance(decided, DeadLetterRetried) else "discarded"
            how = f" ({done} by {decided.by})"
        super().__init__(f"dead letter {letter_id} has already been decided{how}")


def decide_letter(letter_id: str, decision: str, by: str, reason: str) -> None:
    """Retry or discard a dead letter, as a journalled human decision. Raises LetterNotFound
    or LetterAlreadyDecided."""
    run_id = letter_id.split(":", 1)[0]
    journal = DjangoJournal()
    control = ":control:" in letter_id
    stream = streams.control(run_id) if control else streams.journal(run_id)
    # The version read first: a decision written after it makes the append below fail.
    version = journal.version(stream)
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
    cls = DeadLetterRetried if decision == "retry" else DeadLetterDiscarded
    event = cls(run_id=run_id, letter_id=letter_id, by=by, reason=reason)
    try:
        journal.append(stream, [event], version)
    except WrongExpectedVersion:
        raise LetterAlreadyDecided(letter_id) from None
    if decision == "discard" and control:
        finish_discarded(run_id, by, reason)
    projection.catch_up()
    queue.advance(run_id)


def events_of(journal: DjangoJournal, run_id: str, stream: str, cls: type[E]) -> list[E]:
    return [r.event for r in journal.of_kind(run_id, stream, cls.kind) if isinstance(r.event, cls)]


def finish_discarded(run_id: str, by: str, reason: str) -> None:
    """A discarded infrastructure letter ends the run: nobody will drive it again."""
    journal = DjangoJournal()
    stream = streams.journal(run_id)
    reason = f"discarded by {by}: {reason}"
    finished = TeamFinished(run_id=run_id, status="escalated", reason=reason)
    journal.append(stream, [finished], journal.version(stream))
    # No step will end this run (the next one finds it finished and stops): what follows a
    # run's end happens here, as after a run's last step.
    ended.run_ended(run_id, finished.status)
