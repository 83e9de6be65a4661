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
from runtime.journal import (
    Journal,
    WrongExpectedVersion,
    last_record,
    read_between,
    read_run_of_kind,
)

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
        """The intent's current version (`latest`: its stream's last record, not every
        version a person declared); KeyError where it has none."""
        latest = self.latest(intent_id)
        if latest is None:
            raise KeyError(f"no intent {intent_id}")
        return Intent(intent_id, latest.intent_version, latest.statement)

    def latest(self, intent_id: str) -> IntentDeclared | None:
        """The intent's current version (`history`'s last), None where it has none."""
        return self.latest_at(intent_id)[0]

    def latest_at(self, intent_id: str) -> tuple[IntentDeclared | None, int]:
        """The intent's current version and the version of its stream it was read at, as `read`
        gives them, from the stream's last record alone (one row by the index, where `read`
        cost every version a person ever declared, on every check of every mutation made
        under the intent): only IntentDeclared is written to an intent's stream (`declare`, a
        fork's copy of its parent's), so its last record is the latest; an empty stream
        leaves the run's carried version. A stream whose last record is anything else was
        not written here, and is read whole, as before."""
        last = last_record(self.journal, self.stream(intent_id))
        if last is None:
            carried = self.carried(intent_id)
            return (carried[-1] if carried else None), 0
        if isinstance(last.event, IntentDeclared):
            return last.event, last.version
        declared, at = self.read(intent_id)
        return (declared[-1] if declared else None), at

    def declared_at(self, intent_id: str, version: int) -> int:
        """The version of the intent's stream holding the IntentDeclared of intent version
        `version`; 0 where the stream holds none (a run's carried version 1, or one never
        declared). Each declaration is the version before it plus one, appended at the
        stream's version it read (`declare`), and a fork copies its parent's declarations in
        order, so the stream's intent versions run on by one: `version` sits as many records
        before the last as it is versions behind the latest. That record alone is read, and
        checked; a stream where it is not what was declared (not written by `declare`) is
        read whole, as before."""
        stream = self.stream(intent_id)
        last = last_record(self.journal, stream)
        if last is None:
            return 0
        if isinstance(last.event, IntentDeclared):
            latest = last.event.intent_version
            if version > latest:
                return 0  # not declared yet
            at = last.version - (latest - version)
            if at < 1:
                return 0  # before the stream's first: carried by the run
            found = [last] if at == last.version else read_between(self.journal, stream, at - 1, at)
            e = found[0].event if found else None
            if isinstance(e, IntentDeclared) and e.intent_version == version:
                return at
        return next(
            (
                r.version
                for r in self.journal.read(stream)
                if isinstance(r.event, IntentDeclared) and r.event.intent_version == version
            ),
            0,
        )

    def page(
        self, intent_id: str, after: int = 0, limit: int = 100
    ) -> tuple[IntentDeclared | None, list[IntentDeclared]]:
        """The intent's current version, and its versions after version `after`, oldest first,
        the first `limit` of them: `history` a page at a time, which reads those records
        alone (and the stream's last), where `history` reads every version ever declared.
        As `declared_at` finds one version's record: the stream's intent versions run on by
        one (`declare`), so the page's sit at known stream versions; a stream where they are
        not what was declared there (not written by `declare`) is read whole, as before."""
        if after < 0 or limit < 1:
            raise ValueError(f"after must be 0 or more and limit 1 or more: {after}, {limit}")
        latest, at = self.latest_at(intent_id)
        if latest is None or latest.intent_version <= after:
            return latest, []
        offset = latest.intent_version - at  # the versions before the stream's: a run's carried
        carried = self.carried(intent_id) if after < offset else []
        head = [d for d in carried if d.intent_version > after]
        start, until = max(0, after - offset), min(at, after - offset + limit)
        records = read_between(self.journal, self.stream(intent_id), start, until)
        declared = [r.event for r in records if isinstance(r.event, IntentDeclared)]
        carried_whole = [d.intent_version for d in head] == list(range(after + 1, offset + 1))
        if (
            carried_whole
            and len(declared) == len(records) == max(0, until - start)
            and all(
                d.intent_version == offset + r.version
                for d, r in zip(declared, records, strict=True)
            )
        ):
            return latest, [*head, *declared][:limit]
        whole = self.history(intent_id)
        found = [d for d in whole if d.intent_version > after]
        return (whole[-1] if whole else None), found[:limit]

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
        # The run's IntentCarried alone (by the run's index of kinds), not the run's whole
        # stream, which grows with every call of the run and was read at every check of its
        # mutations while nobody superseded its intent.
        run = streams.journal(run_id)
        for r in read_run_of_kind(self.journal, run_id, run, IntentCarried.kind):
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
        # The version and the stream's version from one read, and the new version appended
        # at it: reading the stream's version again for the append let a declaration that
        # landed between the two reads pass unseen, and two people who both superseded
        # version 1 both succeeded (versions 1, 2, 2).
        # The last record alone gives both (latest_at), as the whole read did: the versions
        # people declared are not read to append the next.
        latest, at = self.latest_at(intent_id)
        current = latest.intent_version if latest is not None else 0
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
