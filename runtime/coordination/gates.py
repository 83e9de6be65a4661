"""The mutation boundary's state: intents with versions, and leases with epochs.

An intent is what a person wants done (stream `intent-<id>`); when they change their mind, its
version goes up, and work or messages decided under the old version are refused where they
would change something — not applied and corrected later. A lease is ownership of a resource
for a while (stream `lease-<resource>`, the one primitive of runtime/coordination/leases.py);
its epoch is the stream version of its grant (renewals keep it), every mutation carries the
epoch it holds, and a stale epoch is refused even when its owner is alive and sure of itself.
Both are checked in one place, with authority, evidence and the idempotency key: the mutation
gate (runtime/coordination/mutation.py), which journals each refusal as MutationRefused
(journals from before it hold StaleWorkRejected).
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime import streams
from runtime.coordination import leases
from runtime.coordination.leases import Lease
from runtime.events import IntentCarried, IntentDeclared
from runtime.journal import Journal, WrongExpectedVersion

__all__ = ["TASK", "Intent", "Intents", "Lease", "Leases"]

TASK = "task-"  # a team run's own intent is `task-<run id>`


@dataclass(frozen=True)
class Intent:
    intent_id: str
    version: int
    statement: str


class Intents:
    """Intents by id. Most live wholly in their stream `intent-<id>`. A team run's own intent,
    `task-<run>` (runtime/coordination/carried.py), has its first version in the run's stream
    (IntentCarried: the run's statement of its task, not a person's decision, so a journal file
    of the run carries no IntentDeclared and imports like any other); the versions people
    declare over it follow in `intent-task-<run>`."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    @staticmethod
    def stream(intent_id: str) -> str:
        return f"intent-{intent_id}"

    def current(self, intent_id: str) -> Intent:
        declared = self.history(intent_id)
        if not declared:
            raise KeyError(f"no intent {intent_id}")
        return Intent(intent_id, declared[-1].intent_version, declared[-1].statement)

    def history(self, intent_id: str) -> list[IntentDeclared]:
        """Every version of the intent, oldest first (a run's carried one as its first)."""
        return self.read(intent_id)[0]

    def read(self, intent_id: str) -> tuple[list[IntentDeclared], int]:
        """Every version of the intent, oldest first, and the version of its stream they were
        read at: one read gives both, so a write at that version is refused when anybody
        declared a version after them."""
        records = self.journal.read(self.stream(intent_id))
        declared = [r.event for r in records if isinstance(r.event, IntentDeclared)]
        return [*self.carried(intent_id), *declared], records[-1].version if records else 0

    def carried(self, intent_id: str) -> list[IntentDeclared]:
        """A team run's own intent as its run carried it: version 1, stated by the harness."""
        if not intent_id.startswith(TASK):
            return []
        run_id = intent_id.removeprefix(TASK)
        for r in self.journal.read(streams.journal(run_id)):
            e = r.event
            if isinstance(e, IntentCarried) and e.intent_id == intent_id:
                return [
                    IntentDeclared(
                        run_id=run_id,
                        intent_id=intent_id,
                        intent_version=e.intent_version,
                        statement=e.statement,
                        by="harness",
                        reason="the run's task",
                        t=e.t,
                    )
                ]
        return []

    def declare(
        self,
        intent_id: str,
        statement: str,
        by: str,
        reason: str = "",
        based_on: int | None = None,
    ) -> Intent:
        """Declare an intent, or supersede the current one with a new version.

        With `based_on` (the version the person was looking at) it is a compare-and-swap:
        WrongExpectedVersion (in intent versions) when somebody superseded it in between, so
        nobody replaces a version they never saw. Without it, the version it reads is the one
        superseded, and a version declared between that read and the write is refused the
        same way: two declarations never both follow one version."""
        stream = self.stream(intent_id)
        # The versions and the stream's version from one read, and the new version appended
        # at it: reading the stream's version again for the append let a declaration that
        # landed between the two reads pass unseen, and two people who both superseded
        # version 1 both succeeded (versions 1, 2, 2).
        history, at = self.read(intent_id)
        current = history[-1].intent_version if history else 0
        version = current if based_on is None else based_on
        if version != current:
            raise WrongExpectedVersion(stream, version, current)
        event = IntentDeclared(
            intent_id=intent_id,
            intent_version=version + 1,
            statement=statement,
            by=by,
            reason=reason,
        )
        try:
            self.journal.append(stream, [event], at)
        except WrongExpectedVersion:
            # Somebody declared a version between our read and our write.
            raise WrongExpectedVersion(stream, version, self.current(intent_id).version) from None
        return Intent(intent_id, version + 1, statement)


# The lease primitive (runtime/coordination/leases.py), where the intents are: a mutation's
# epoch is checked at the mutation gate (runtime/coordination/mutation.py).
Leases = leases.Leases
