"""The mutation boundary: intents with versions, and leases with epochs.

An intent is what a person wants done (stream `intent-<id>`); when they change their mind, its
version goes up, and work or messages decided under the old version are refused where they
would change something — not applied and corrected later. A lease is ownership of a resource
for a while (stream `lease-<resource>`, the one primitive of runtime/coordination/leases.py);
its epoch is the stream version of its grant (renewals keep it), every mutation carries the
epoch it holds, and a stale epoch is refused even when its owner is alive and sure of itself.
Each refusal is journalled (StaleWorkRejected).
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.coordination import leases
from runtime.coordination.leases import Lease
from runtime.events import IntentDeclared, StaleWorkRejected
from runtime.journal import Journal, append_next, standing_epoch

__all__ = ["Intent", "Intents", "Lease", "Leases", "Stale", "refuse"]


class Stale(Exception):
    """A mutation decided under a superseded intent, or under a lease that moved on."""

    def __init__(self, rejected: StaleWorkRejected) -> None:
        super().__init__(rejected.reason)
        self.rejected = rejected


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

    def check(self, intent_id: str, held: int, what: str, log: str, run_id: str = "") -> None:
        """Refuse (and record) a mutation decided under an older version of the intent."""
        current = self.current(intent_id).version
        if held != current:
            refuse(
                self.journal,
                log,
                StaleWorkRejected(
                    run_id=run_id,
                    what=what,
                    gate="intent",
                    held=held,
                    current=current,
                    reason=f"{what} was decided under version {held} of intent {intent_id}, "
                    f"which a person has since superseded with version {current}",
                ),
            )


class Leases(leases.Leases):
    """The lease primitive (runtime/coordination/leases.py), with the gate's check."""

    def check(self, resource: str, epoch: int, what: str, log: str, run_id: str = "") -> None:
        """Refuse (and record) a mutation carrying an epoch that is no longer the lease's."""
        current = standing_epoch(self.last(resource))
        if epoch != current:
            refuse(
                self.journal,
                log,
                StaleWorkRejected(
                    run_id=run_id,
                    what=what,
                    gate="lease",
                    held=epoch,
                    current=current,
                    reason=f"{what} carries epoch {epoch} of the lease on {resource}, "
                    f"which is at epoch {current} now",
                ),
            )


def refuse(journal: Journal, log: str, rejected: StaleWorkRejected) -> None:
    """Journal the refusal in `log` (a stream) and raise it."""
    append_next(journal, log, [rejected])
    raise Stale(rejected)
