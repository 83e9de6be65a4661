"""Delegation limits: no chain deeper than the limit, and none back to an agent already on it.

Seed 02 §23: A delegates to B, B to C, C back to A, and the task is buried under orchestration
(or nobody ever works on it). Every delegation names the one it continues (`parent`); its chain
is the parent's chain plus the parent's delegate, so each agent knows the whole way back to the
root. A delegation is refused, with DelegationRefused saying which rule, when

    cycle   its delegate is already on the chain (or is the delegator itself), or
    depth   it would make the chain deeper than `max_depth` delegations.

The chains are read from the run's own WorkDelegated events, and the decision depends on
nothing else, so a resumed or replayed run takes it again, identically.
"""

from __future__ import annotations

from collections.abc import Iterable

from runtime.events import DelegationRefused, Event, WorkDelegated, new_id
from runtime.session import Session

MAX_DEPTH = 3


class Refused(Exception):
    """The delegation was refused (its event is journalled): the delegator keeps the work."""

    def __init__(self, refused: DelegationRefused) -> None:
        super().__init__(refused.reason)
        self.refused = refused


def delegations(events: Iterable[Event]) -> dict[str, WorkDelegated]:
    return {e.delegation_id: e for e in events if isinstance(e, WorkDelegated)}


class Delegations:
    def __init__(self, session: Session, max_depth: int = MAX_DEPTH) -> None:
        if max_depth < 1:
            raise ValueError("the delegation depth limit needs at least one delegation")
        self.session = session
        self.max_depth = max_depth

    def delegate(
        self, by: str, to: str, *, parent: str | None = None, task_id: str | None = None
    ) -> WorkDelegated:
        """Hand work from `by` to `to`, continuing delegation `parent` (None: `by` holds the
        work itself). Raises Refused, journalled, at a cycle or past the depth limit."""
        s = self.session
        before: list[str] = []
        if parent is not None:
            found = delegations(s.record.since(0)).get(parent)
            if found is None:
                raise KeyError(f"no delegation {parent} in this run")
            if found.to != by:
                raise ValueError(f"{by} was not delegated {parent} ({found.to} was)")
            before = list(found.chain)
        chain = [*before, by]
        depth = len(chain)
        rule, why = None, ""
        if to in chain:
            loop = " → ".join([*chain, to])
            rule, why = "cycle", f"{by} may not delegate to {to}, already on the chain ({loop})"
        elif depth > self.max_depth:
            rule, why = (
                "depth",
                (
                    f"{by} may not delegate to {to}: the chain {' → '.join(chain)} would be "
                    f"{depth} delegations deep (the limit is {self.max_depth})"
                ),
            )
        if rule is not None:
            refusal = s.new(
                DelegationRefused,
                agent=by,
                task_id=task_id,
                by=by,
                to=to,
                chain=chain,
                depth=depth,
                limit=self.max_depth,
                rule=rule,
                reason=why,
            )
            s.emit(refusal)
            raise Refused(refusal)
        recorded = s.peek()
        # the id is the record's on a replay: a fresh one would not compare equal
        delegation_id = (
            recorded.delegation_id if isinstance(recorded, WorkDelegated) else f"d-{new_id()[:12]}"
        )
        event = s.new(
            WorkDelegated,
            agent=by,
            task_id=task_id,
            delegation_id=delegation_id,
            by=by,
            to=to,
            chain=chain,
            depth=depth,
            parent=parent,
        )
        s.emit(event)
        return event


__all__ = ["MAX_DEPTH", "Delegations", "Refused", "delegations"]
