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

from runtime.coordination import leases
from runtime.coordination.leases import Lease
from runtime.events import IntentDeclared
from runtime.journal import Journal

__all__ = ["Intent", "Intents", "Lease", "Leases"]


@dataclass(frozen=True)
class Intent:
    intent_id: str
    version: int
    statement: str


class Intents:
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
        """Every version of the intent, oldest first."""
        return [
            r.event
            for r in self.journal.read(self.stream(intent_id))
            if isinstance(r.event, IntentDeclared)
        ]

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
        WrongExpectedVersion when somebody superseded it in between, so nobody replaces a
        version they never saw."""
        stream = self.stream(intent_id)
        version = self.journal.version(stream) if based_on is None else based_on
        event = IntentDeclared(
            intent_id=intent_id,
            intent_version=version + 1,
            statement=statement,
            by=by,
            reason=reason,
        )
        self.journal.append(stream, [event], version)
        return Intent(intent_id, version + 1, statement)


# The lease primitive (runtime/coordination/leases.py), where the intents are: a mutation's
# epoch is checked at the mutation gate (runtime/coordination/mutation.py).
Leases = leases.Leases
