"""What agents owe and wait for: commitments and their owners, work refused as a duplicate,
waits that closed a cycle, delegations past their limits, and livelock.

Seed 02 §§4, 14, 21-23. The harness writes these, never an agent: each is a decision taken by
a primitive of runtime/coordination/ on the journal's state, in the run's own stream.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from runtime.events.base import Event
from runtime.events.times import Instant

# --- commitments (runtime/coordination/commitments.py) ----------------------------------------


class CommitmentMade(Event):
    """A durable obligation with one owner: it outlives the task that made it, and is over
    only when released (fulfilled or given up) or transferred to a new owner."""

    kind: ClassVar[str] = "CommitmentMade"
    commitment_id: str
    owner: str
    what: str
    lease: str | None = None  # the resource whose lease the owner holds it under
    epoch: int | None = None  # that lease's epoch when the commitment was made


class CommitmentAcknowledged(Event):
    """The owner said it holds the commitment (a transfer is complete only once acknowledged)."""

    kind: ClassVar[str] = "CommitmentAcknowledged"
    commitment_id: str
    by: str


class CommitmentReleased(Event):
    """The owner released the commitment: it kept it, or gave it up, saying so."""

    kind: ClassVar[str] = "CommitmentReleased"
    commitment_id: str
    by: str
    outcome: Literal["fulfilled", "given_up"]
    reason: str = ""


class CommitmentTransferred(Event):
    """The commitment changed owner: its owner handed it on, or lost the lease it held it
    under and the harness moved it to the lease's new holder."""

    kind: ClassVar[str] = "CommitmentTransferred"
    commitment_id: str
    from_owner: str
    to_owner: str
    reason: str
    lease: str | None = None
    epoch: int | None = None  # the new holder's epoch


# --- the work registry (runtime/coordination/registry.py) -------------------------------------


class DuplicateWorkRefused(Event):
    """An agent set out to do work another assignment already did or holds: refused before it
    started. The envelope's agent and task are the refused; `holder` and `holder_task` are the
    work's owner."""

    kind: ClassVar[str] = "DuplicateWorkRefused"
    work: str  # the work key, e.g. "write:tests/test_parser.py"
    artefact: str
    holder: str
    holder_task: str
    tool: str
    reason: str


# --- the wait-for graph (runtime/coordination/waits.py) ---------------------------------------


class LeaseAwaited(Event):
    """An agent waits for a lease somebody else holds: an edge of the wait-for graph (open
    REQUESTs are the other edges, read from MessageSent)."""

    kind: ClassVar[str] = "LeaseAwaited"
    resource: str
    waiter: str
    holder: str


class LeaseTaken(Event):
    """A harness took a lease for one of its agents (a parallel writer's fix or file), as the
    run records it: the lease's own stream has the grant, and a resumed or replayed run reads
    this back instead of taking the lease again. A wait for it ends here."""

    kind: ClassVar[str] = "LeaseTaken"
    resource: str
    holder: str
    epoch: int
    expires: Instant
    stream_version: int  # the lease stream's version after the grant (where it writes next)


class LeaseGivenBack(Event):
    """A lease the harness took was given back: its holder is done with it, yields it to break
    a cycle of waits, or lost it (`outcome` says which; a revoked one starts `revoked:`)."""

    kind: ClassVar[str] = "LeaseGivenBack"
    resource: str
    holder: str
    epoch: int
    outcome: str


class DeadlockDetected(Event):
    """A wait closed a cycle in the wait-for graph. `cycle` names the agents in order, each
    waiting for the next (the last for the first); `waits` are its edges; the wait of
    `refused` was refused by `rule` to break it."""

    kind: ClassVar[str] = "DeadlockDetected"
    cycle: list[str]
    waits: list[dict[str, Any]]
    refused: str
    rule: str
    reason: str


# --- delegation limits (runtime/coordination/delegation.py) -----------------------------------


class WorkDelegated(Event):
    """An agent handed work on: `chain` is every delegator from the root, this one last."""

    kind: ClassVar[str] = "WorkDelegated"
    delegation_id: str
    by: str
    to: str
    chain: list[str]
    depth: int
    parent: str | None = None  # the delegation this one continues


class DelegationRefused(Event):
    """A delegation that would have gone deeper than the limit, or back to an agent already
    on its chain, refused before the work was handed on."""

    kind: ClassVar[str] = "DelegationRefused"
    by: str
    to: str
    chain: list[str]
    depth: int
    limit: int
    rule: Literal["depth", "cycle"]
    reason: str


# --- livelock (runtime/coordination/livelock.py) ----------------------------------------------


class LivelockDetected(Event):
    """Work went round without progress: tasks reopened, facts flipping back, the same conflict
    met again; `signals` lists each with where it was seen. The harness stops the loop here."""

    kind: ClassVar[str] = "LivelockDetected"
    signals: list[dict[str, Any]] = Field(default_factory=list)
    limit: int
    reason: str
