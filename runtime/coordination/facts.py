"""Shared facts without lost updates: a fact is the stream `subject-<name>`.

Nobody writes a fact blindly. A write is a compare-and-swap on the version the writer read:
the append carries that version as its expectation, and the store lets exactly one writer
through. The loser learns it lost (WrongExpectedVersion), re-reads, and decides again — at most
`attempts` times; after that the disagreement is no longer the writer's to settle alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from runtime.events import FactChanged
from runtime.journal import Guard, Journal, WrongExpectedVersion, read_between


@dataclass(frozen=True)
class Fact:
    subject: str
    values: dict[str, Any]  # predicate -> value
    version: int


class StillContended(Exception):
    """The writer lost every attempt: somebody else kept changing the fact."""

    def __init__(self, subject: str, attempts: int, last: Fact) -> None:
        super().__init__(f"{subject} changed under every one of {attempts} attempts")
        self.subject = subject
        self.last = last


class Facts:
    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        # What this reader has folded so far, per subject. A stream's past never changes, so
        # a re-read asks only for what came after: a hot fact with a long history costs its
        # news, not its whole history, on every compare-and-swap (docs/benchmarks.md).
        self.known: dict[str, Fact] = {}

    @staticmethod
    def stream(subject: str) -> str:
        return f"subject-{subject}"

    def read(self, subject: str) -> Fact:
        known = self.known.get(subject) or Fact(subject, {}, 0)
        values = dict(known.values)
        version = known.version
        for rec in self.journal.read(self.stream(subject), after=version):
            version = rec.version
            if isinstance(rec.event, FactChanged):
                values[rec.event.predicate] = rec.event.value
        fact = Fact(subject, values, version)
        self.known[subject] = fact
        return fact

    def write(
        self,
        subject: str,
        predicate: str,
        value: Any,
        based_on: int,
        by: str,
        *,
        run_id: str = "",
        intent_version: int | None = None,
        guards: Sequence[Guard] = (),
        call: str | None = None,
    ) -> int:
        """Compare-and-swap: the new version, or WrongExpectedVersion when the fact moved (or,
        naming its stream, when a guarded stream did: runtime.journal). `call`: the tool call
        writing it (`Call.ref`), which `made_by` finds again."""
        event = FactChanged(
            run_id=run_id,
            subject=subject,
            predicate=predicate,
            value=value,
            based_on=based_on,
            by=by,
            intent_version=intent_version,
            call=call,
        )
        self.journal.append(self.stream(subject), [event], based_on, guards=guards)
        return based_on + 1

    def made_by(self, subject: str, based_on: int, call: str) -> FactChanged | None:
        """The change tool call `call` made from version `based_on`, if it made one: a
        compare-and-swap from `based_on` that went through is version `based_on + 1`, whoever
        wrote it, so one record says whether it was this call's."""
        stream = self.stream(subject)
        for rec in read_between(self.journal, stream, based_on, based_on + 1):
            if isinstance(rec.event, FactChanged) and rec.event.call == call:
                return rec.event
        return None

    def decide_and_write(
        self,
        subject: str,
        predicate: str,
        decide: Callable[[Fact], Any],
        by: str,
        attempts: int = 3,
        *,
        run_id: str = "",
    ) -> tuple[Any, int]:
        """Read, decide, write; on a lost race read again and decide again.

        Returns the value written and the version it made. `decide` may return the value the
        fact already has, which writes nothing. Raises StillContended after `attempts` losses.
        """
        fact = self.read(subject)
        for _ in range(attempts):
            value = decide(fact)
            if fact.values.get(predicate) == value and predicate in fact.values:
                return value, fact.version
            try:
                return value, self.write(subject, predicate, value, fact.version, by, run_id=run_id)
            except WrongExpectedVersion:
                fact = self.read(subject)
        raise StillContended(subject, attempts, fact)
