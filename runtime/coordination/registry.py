"""The work registry: duplicate work refused before it starts (seed 02 §14).

A piece of work has a key; for the file tools it is `write:<path>`. The registry reads who did
which work from the run's own events (a write that came back without error names its agent and
task), so it keeps no table of its own and a resumed run knows what the crashed one did. When an
agent sets out to do work another agent already did on another assignment, the registry refuses
it before the tool runs: DuplicateWorkRefused names the work, the refused and the holder, and
the agent gets the refusal as its tool's error. The same agent doing its own work again (a
REJECT's next round, a second edit of its file) is that work continued, not a duplicate.

Why refuse rather than merge: two edits of one file by two assignments cannot be merged safely
by rule (whose text wins?), and the holder's assignment already answers for the file. A team
that wants deliberate duplicates (independent candidates) gives each its own workspace instead.

The decision is journalled where it is taken, and a resumed or replayed run reads it back
instead of deciding again (as deadlines do): a journal written before the registry existed,
which holds the duplicate write itself, replays as it was written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.errors import describe
from runtime.events import DuplicateWorkRefused, Event, ToolDispatched, ToolReturned
from runtime.model import ToolCall
from runtime.session import Session
from runtime.tools import Outcome

WRITES = ("edit_file", "write_file")


class DuplicateWork(Exception):
    """Work another assignment already did: the refusal the agent reads as its tool's error."""


def work_key(tool: str, args: dict[str, Any]) -> tuple[str, str] | None:
    """The work a tool call would do, as (key, artefact); None for a call that does no work
    the registry keeps (reads, test runs, reports)."""
    path = args.get("path")
    if tool not in WRITES or not isinstance(path, str) or not path.strip():
        return None
    artefact = path.strip().removeprefix("./")
    return f"write:{artefact}", artefact


@dataclass(frozen=True)
class Holder:
    agent: str
    task_id: str


class Ledger:
    """Every piece of work done so far, by key: the first agent whose call doing it came back
    without error (a dispatch names the call's arguments; its return says it went through).
    Fed events in order; `feed` takes the ones it has not seen, so a registry asked before
    every call reads each event once."""

    def __init__(self) -> None:
        self.seen = 0
        self.pending: dict[str, tuple[str, str, str]] = {}  # call id -> key, agent, task
        self.done: dict[str, Holder] = {}

    def feed(self, events: list[Event], offset: int = 0) -> dict[str, Holder]:
        """Take the events not seen yet; `events` starts at the stream's `offset`-th (0-based)
        event, so a caller may pass only the tail from `seen` on."""
        for event in events[self.seen - offset :]:
            if isinstance(event, ToolDispatched) and event.call_id:
                key = work_key(event.tool, event.args or {})
                if key is not None:
                    self.pending[event.call_id] = (key[0], event.agent or "?", event.task_id or "-")
            elif isinstance(event, ToolReturned) and event.error is None and event.call_id:
                found = self.pending.pop(event.call_id, None)
                if found is not None and found[0] not in self.done:
                    self.done[found[0]] = Holder(found[1], found[2])
        self.seen = max(self.seen, offset + len(events))
        return self.done

    def state(self) -> dict[str, Any]:
        return {
            "seen": self.seen,
            "pending": {call: list(work) for call, work in self.pending.items()},
            "done": {key: [h.agent, h.task_id] for key, h in self.done.items()},
        }

    @staticmethod
    def sound(state: Any) -> bool:
        """Whether `state` reads as a ledger's (a snapshot is checked before it is trusted)."""
        if not isinstance(state, dict) or not isinstance(state.get("seen"), int):
            return False
        pending, done = state.get("pending"), state.get("done")
        return (
            isinstance(pending, dict)
            and isinstance(done, dict)
            and all(_strings(w, 3) for w in pending.values())
            and all(_strings(h, 2) for h in done.values())
        )

    def take(self, state: dict[str, Any]) -> None:
        self.seen = state["seen"]
        self.pending = {call: (w[0], w[1], w[2]) for call, w in state["pending"].items()}
        self.done = {key: Holder(h[0], h[1]) for key, h in state["done"].items()}


def _strings(value: Any, n: int) -> bool:
    return isinstance(value, list) and len(value) == n and all(isinstance(v, str) for v in value)


def holders(events: list[Event]) -> dict[str, Holder]:
    """Every piece of work done in `events`, by key (see `Ledger`)."""
    return Ledger().feed(events)


class WorkRegistry:
    """The run's registry of work done, read from its session. Called with a call and its
    envelope it is the agent loop's `admit` hook (runtime/loop.py), and it keeps its ledger in
    the loop's snapshots (`Kept`): a resumed loop does not read back the turns it skipped."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.ledger = Ledger()

    def __call__(self, call: ToolCall, at: dict[str, Any]) -> Outcome | None:
        return self.admit(call, at)

    def _fed(self) -> dict[str, Holder]:
        """The ledger, fed the events emitted since it last looked (only those)."""
        seen = self.ledger.seen
        return self.ledger.feed(self.session.record.since(seen), offset=seen)

    def keep(self) -> dict[str, Any]:
        self._fed()  # to the snapshot's place: a resume from it reads nothing before it
        return self.ledger.state()

    def fits(self, state: Any) -> bool:
        return Ledger.sound(state) and state["seen"] >= self.ledger.seen

    def take(self, state: dict[str, Any]) -> None:
        self.ledger.take(state)

    def admit(self, call: ToolCall, at: dict[str, Any]) -> Outcome | None:
        """None when the call may run; else its refusal, journalled, as the call's outcome."""
        key = work_key(call.name, call.args)
        if key is None:
            return None
        session = self.session
        recorded = session.peek()
        if isinstance(recorded, DuplicateWorkRefused):
            session.emit(recorded)  # the record decided here: read it back
            return refusal(call.name, recorded.reason)
        if not session.live:
            return None  # a record without the decision was written before it existed
        work, artefact = key
        holder = self._fed().get(work)
        agent = at.get("agent") or "?"
        if holder is None or holder.agent == agent:
            return None
        task = at.get("task_id") or "-"
        reason = (
            f"{artefact} is {holder.agent}'s work on {holder.task_id}; {agent} on {task} "
            f"may not redo it (ask {holder.agent}'s task to change it, or report what you found)"
        )
        event = session.new(
            DuplicateWorkRefused,
            **at,
            work=work,
            artefact=artefact,
            holder=holder.agent,
            holder_task=holder.task_id,
            tool=call.name,
            reason=reason,
        )
        session.emit(event)
        return refusal(call.name, reason)


def refusal(tool: str, reason: str) -> Outcome:
    return Outcome(tool, error=describe(DuplicateWork(reason)))


__all__ = ["WRITES", "DuplicateWork", "Holder", "Ledger", "WorkRegistry", "holders", "work_key"]
