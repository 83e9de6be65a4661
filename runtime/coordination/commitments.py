"""Commitments: durable obligations with one owner, acknowledged, released or transferred.

Seed 02 §4: a task is executable work, a commitment an obligation that outlives it ("the
refund is either made or explicitly given up before the run ends"). Delegating a task hands
on no commitment; only a transfer does, and a transfer is complete once the new owner
acknowledges it. Every step is an event in the run's own stream, and the ledger is read back
from those events (`ledger`), so it keeps no table of its own:

    CommitmentMade          owned by `owner`, optionally under a lease (resource and epoch)
    CommitmentAcknowledged  the owner says it holds it
    CommitmentReleased      the owner kept it (`fulfilled`) or gave it up (`given_up`)
    CommitmentTransferred   a new owner: handed on by the owner, or moved by `reclaim` when
                            the owner lost the lease it held it under

Only the owner may acknowledge, release or hand on a commitment (CommitmentRefused otherwise,
nothing journalled). A commitment still open when the run finishes is orphaned: the
`orphaned_commitment` finding (runtime/signatures/obligations.py) names it.

`reclaim` reads the lease's stream, which is outside the run: a resumed or replayed run reads
the record's transfers back instead of looking again (as deadlines do).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from runtime.coordination.leases import Lease, Leases
from runtime.events import (
    CommitmentAcknowledged,
    CommitmentMade,
    CommitmentReleased,
    CommitmentTransferred,
    Event,
)
from runtime.session import Session


class CommitmentRefused(Exception):
    """A step on a commitment its caller may not take: not the owner, unknown, or closed."""


@dataclass(frozen=True)
class Commitment:
    commitment_id: str
    owner: str
    what: str
    acknowledged: bool = False
    open: bool = True
    lease: str | None = None
    epoch: int | None = None


def ledger(events: Iterable[Event]) -> dict[str, Commitment]:
    """Every commitment as the events leave it, by id, in the order they were made."""
    found: dict[str, Commitment] = {}
    for e in events:
        if isinstance(e, CommitmentMade):
            found[e.commitment_id] = Commitment(
                e.commitment_id, e.owner, e.what, lease=e.lease, epoch=e.epoch
            )
            continue
        c = found.get(getattr(e, "commitment_id", ""))
        if c is None:
            continue
        if isinstance(e, CommitmentAcknowledged):
            found[c.commitment_id] = replace(c, acknowledged=True)
        elif isinstance(e, CommitmentReleased):
            found[c.commitment_id] = replace(c, open=False)
        elif isinstance(e, CommitmentTransferred):
            found[c.commitment_id] = replace(
                c, owner=e.to_owner, acknowledged=False, epoch=e.epoch, lease=e.lease or c.lease
            )
    return found


class Commitments:
    """The run's commitment ledger, over its session (and the leases commitments are held
    under)."""

    def __init__(self, session: Session, leases: Leases | None = None) -> None:
        self.session = session
        self.leases = leases

    def ledger(self) -> dict[str, Commitment]:
        return ledger(self.session.record.since(0))

    def open(self) -> list[Commitment]:
        return [c for c in self.ledger().values() if c.open]

    def get(self, commitment_id: str, by: str) -> Commitment:
        """The open commitment, when `by` owns it; else CommitmentRefused."""
        c = self.ledger().get(commitment_id)
        if c is None:
            raise CommitmentRefused(f"no commitment {commitment_id}")
        if not c.open:
            raise CommitmentRefused(f"commitment {commitment_id} is already released")
        if c.owner != by:
            raise CommitmentRefused(
                f"{by} does not own commitment {commitment_id} ({c.owner} does)"
            )
        return c

    def make(
        self,
        commitment_id: str,
        owner: str,
        what: str,
        *,
        task_id: str | None = None,
        lease: Lease | None = None,
    ) -> Commitment:
        if commitment_id in self.ledger():
            raise CommitmentRefused(f"commitment {commitment_id} was made already")
        s = self.session
        s.emit(
            s.new(
                CommitmentMade,
                agent=owner,
                task_id=task_id,
                commitment_id=commitment_id,
                owner=owner,
                what=what,
                lease=None if lease is None else lease.resource,
                epoch=None if lease is None else lease.epoch,
            )
        )
        return self.ledger()[commitment_id]

    def acknowledge(self, commitment_id: str, by: str) -> None:
        self.get(commitment_id, by)
        s = self.session
        s.emit(s.new(CommitmentAcknowledged, agent=by, commitment_id=commitment_id, by=by))

    def release(
        self,
        commitment_id: str,
        by: str,
        outcome: Literal["fulfilled", "given_up"] = "fulfilled",
        reason: str = "",
    ) -> None:
        self.get(commitment_id, by)
        s = self.session
        s.emit(
            s.new(
                CommitmentReleased,
                agent=by,
                commitment_id=commitment_id,
                by=by,
                outcome=outcome,
                reason=reason,
            )
        )

    def transfer(self, commitment_id: str, by: str, to: str, reason: str) -> None:
        """Hand the commitment on; it is `to`'s once `to` acknowledges it."""
        c = self.get(commitment_id, by)
        if to == by:
            raise CommitmentRefused(f"{by} already owns commitment {commitment_id}")
        s = self.session
        s.emit(
            s.new(
                CommitmentTransferred,
                agent=by,
                commitment_id=commitment_id,
                from_owner=c.owner,
                to_owner=to,
                reason=reason,
                lease=c.lease,
                epoch=c.epoch,
            )
        )

    def reclaim(self, resource: str) -> list[CommitmentTransferred]:
        """Move every open commitment held under the lease on `resource` at an epoch that no
        longer stands to the lease's current holder: its owner lost the lease (it expired and
        was taken over), so it can no longer act on what it owes. Returns the transfers."""
        s = self.session
        moved: list[CommitmentTransferred] = []
        if not s.live:
            while isinstance(recorded := s.peek(), CommitmentTransferred) and (
                recorded.lease == resource
            ):
                s.emit(recorded)  # the record looked at the lease then: read it back
                moved.append(recorded)
            return moved
        if self.leases is None:
            raise CommitmentRefused("no lease store to reclaim commitments from")
        current = self.leases.current(resource)
        if current is None:
            return moved  # released, nobody holds it: the commitments stay with their owners
        for c in self.open():
            if c.lease != resource or c.epoch == current.epoch or c.owner == current.holder:
                continue
            event = s.new(
                CommitmentTransferred,
                agent=current.holder,
                commitment_id=c.commitment_id,
                from_owner=c.owner,
                to_owner=current.holder,
                reason=f"{c.owner} lost the lease on {resource} (it held epoch {c.epoch}); "
                f"{current.holder} holds it at epoch {current.epoch}",
                lease=resource,
                epoch=current.epoch,
            )
            s.emit(event)
            moved.append(event)
        return moved


__all__ = ["Commitment", "CommitmentRefused", "Commitments", "ledger"]
