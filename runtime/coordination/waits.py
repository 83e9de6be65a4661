"""The wait-for graph: who waits for whom, over open requests and leases; a cycle is broken.

Seed 02 §21: two healthy agents, each waiting for the other, make no progress, and no timeout
of either says why. The graph's edges are read from the run's events:

    a REQUEST (MessageSent)      its sender waits for its recipient, until the recipient sends
                                 a message on the task (a REQUEST of its own answers nothing)
    LeaseAwaited                 an agent waits for the holder of a lease, until the lease is
                                 granted to it or given back (LeaseGranted, LeaseReleased in
                                 the lease's stream; LeaseTaken, LeaseGivenBack where a harness
                                 records them in the run)

Before a harness adds a wait (sends a REQUEST, or waits for a lease) it asks the graph. A wait
that would close a cycle is refused, by one stated rule: the youngest wait in the cycle, the
one that would close it, is refused; the waits that were there first stand, so the agent
that has waited longest is the one that gets its answer. DeadlockDetected names the cycle, its
waits and the refused one; the harness then takes the refused agent's other way (it answers
without, escalates, or gives its own lease back).

The graph is a fold (`WaitGraph`, a small JSON state), so the `deadlock` finding steps the very
same code over a journal, including one written before DeadlockDetected existed: there a cycle
of open requests is a deadlock nothing broke. Deciding on a REQUEST depends on the run's events
alone; a lease's holder is read from the lease's stream, so a resumed or replayed run reads
the recorded LeaseAwaited back instead of looking again.
"""

from __future__ import annotations

from typing import Any

from runtime.coordination.leases import Leases
from runtime.events import (
    DeadlockDetected,
    Event,
    LeaseAwaited,
    LeaseGivenBack,
    LeaseGranted,
    LeaseReleased,
    LeaseTaken,
    MessageSent,
)
from runtime.session import Session

RULE = "youngest-wait-refused"

Wait = dict[str, Any]  # {"key", "waiter", "holder", "on", "task", "at"}


class WaitGraph:
    """The open waits, keyed; `state` is JSON a fold can store."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        self.state: dict[str, Any] = state if state is not None else {"waits": {}}

    @property
    def waits(self) -> dict[str, Wait]:
        found: dict[str, Wait] = self.state["waits"]
        return found

    @staticmethod
    def wait_of(event: Event, at: int) -> Wait | None:
        """The wait an event starts, if it starts one."""
        if isinstance(event, MessageSent):
            if event.performative.lower() != "request" or event.sender == event.recipient:
                return None
            task = event.task_id or "-"
            return {
                "key": f"request:{event.message_id or at}",
                "waiter": event.sender,
                "holder": event.recipient,
                "on": f"a reply on {task}",
                "task": task,
                "at": at,
            }
        if isinstance(event, LeaseAwaited):
            return {
                "key": f"lease:{event.resource}:{event.waiter}",
                "waiter": event.waiter,
                "holder": event.holder,
                "on": f"the lease on {event.resource}",
                "task": event.task_id or "-",
                "at": at,
            }
        return None

    def step(self, event: Event, at: int) -> None:
        """Grow or shrink the graph by one event (`at`: its place, cited by the waits)."""
        waits = self.waits
        wait = self.wait_of(event, at)
        if isinstance(event, MessageSent) and wait is None:
            task = event.task_id or "-"
            # a message from the awaited agent on the thread, other than a REQUEST of its own,
            # answers its waiters there
            for key in [k for k, w in waits.items() if w["key"].startswith("request:")]:
                if waits[key]["holder"] == event.sender and waits[key]["task"] == task:
                    del waits[key]
        elif isinstance(event, LeaseGranted | LeaseTaken):
            waits.pop(f"lease:{event.resource}:{event.holder}", None)
        elif isinstance(event, LeaseReleased | LeaseGivenBack):
            for key in [k for k in waits if k.startswith(f"lease:{event.resource}:")]:
                del waits[key]
        elif isinstance(event, DeadlockDetected) and event.waits:
            waits.pop(str(event.waits[-1].get("key")), None)  # the refused wait
        if wait is not None:
            waits[wait["key"]] = wait

    def cycle(self, wait: Wait) -> list[Wait] | None:
        """The waits that, with `wait`, make a cycle: a path of open waits from its holder back
        to its waiter (the shortest, oldest first); None when there is none."""
        start, goal = wait["holder"], wait["waiter"]
        if start == goal:
            return [wait]
        by_waiter: dict[str, list[Wait]] = {}
        for w in sorted(self.waits.values(), key=lambda w: int(w["at"])):
            if w["key"] != wait["key"]:
                by_waiter.setdefault(w["waiter"], []).append(w)
        paths: list[tuple[str, list[Wait]]] = [(start, [])]
        seen = {start}
        while paths:
            node, path = paths.pop(0)
            for w in by_waiter.get(node, []):
                if w["holder"] == goal:
                    return [*path, w, wait]
                if w["holder"] not in seen:
                    seen.add(w["holder"])
                    paths.append((w["holder"], [*path, w]))
        return None


def describe(cycle: list[Wait]) -> str:
    return "; ".join(f"{w['waiter']} waits for {w['holder']} ({w['on']})" for w in cycle)


class WaitForGraph:
    """The run's wait-for graph, read from its session; asked before each new wait."""

    def __init__(self, session: Session, leases: Leases | None = None) -> None:
        self.session = session
        self.leases = leases

    def graph(self) -> WaitGraph:
        graph = WaitGraph()
        for i, event in enumerate(self.session.record.since(0)):
            graph.step(event, i)
        return graph

    def request(self, sender: str, recipient: str, task_id: str) -> DeadlockDetected | None:
        """Before `sender` sends `recipient` a REQUEST on `task_id`: the DeadlockDetected
        (journalled) that refuses it, or None when it may be sent."""
        at = self.session.position
        wait: Wait = {
            "key": f"request:{sender}>{recipient}@{at}",
            "waiter": sender,
            "holder": recipient,
            "on": f"a reply on {task_id}",
            "task": task_id,
            "at": at,
        }
        return self.refuse_if_cycle(self.graph(), wait, task_id)

    def await_lease(self, waiter: str, resource: str, task_id: str | None = None) -> Event:
        """`waiter` waits for the lease on `resource`: LeaseAwaited, or the DeadlockDetected
        that refuses the wait (both journalled). A lease nobody holds needs no wait: ValueError."""
        s = self.session
        recorded = s.peek()
        if not s.live and isinstance(recorded, LeaseAwaited):
            awaited = recorded  # the record read the lease then: read it back
        else:
            if self.leases is None:
                raise ValueError("no lease store to read the holder from")
            lease = self.leases.current(resource)
            if lease is None or lease.holder == waiter:
                raise ValueError(f"nobody else holds the lease on {resource}: take it")
            awaited = s.new(
                LeaseAwaited,
                agent=waiter,
                task_id=task_id,
                resource=resource,
                waiter=waiter,
                holder=lease.holder,
            )
        s.emit(awaited)
        graph = self.graph()
        wait = graph.waits[f"lease:{resource}:{waiter}"]
        return self.refuse_if_cycle(graph, wait, task_id) or awaited

    def refuse_if_cycle(
        self, graph: WaitGraph, wait: Wait, task_id: str | None
    ) -> DeadlockDetected | None:
        cycle = graph.cycle(wait)
        if cycle is None:
            return None
        s = self.session
        agents = [w["waiter"] for w in cycle]
        refused = s.new(
            DeadlockDetected,
            agent=wait["waiter"],
            task_id=task_id,
            cycle=agents,
            waits=cycle,
            refused=wait["waiter"],
            rule=RULE,
            reason=f"{describe(cycle)}: a cycle; {wait['waiter']}'s wait for {wait['holder']}, "
            "the youngest, is refused",
        )
        s.emit(refused)
        return refused


__all__ = ["RULE", "WaitForGraph", "WaitGraph", "describe"]
