"""Onward delegation: a specialist hands a part of its sub-task on to another specialist.

Where the run allows it (the `delegate` setting), every hand-off carries the tool
`team.delegate` (`to`, `part`). Calling it only asks: the specialist goes on with its own work,
and the harness decides. After a round of specialists has reported, the harness reads each
request from the specialist's own stream (what it called, not what it says it did) and checks
it against the delegation limits (`runtime.coordination.delegation`) before anything is sent:

    the root     the harness (`triage-lead`) gave the sub-task to its specialist: recorded as
                 the first WorkDelegated of the chain when its specialist first hands a part on
    allowed      WorkDelegated, then the part is a sub-task of its own (`S2.1`: the first part
                 S2 handed on), handed off and run through the fan-out like any other, settled
                 and judged by the same rules; its own parts follow in the next round
    refused      DelegationRefused (a cycle back to an agent on the chain, or deeper than
                 `delegation_depth`): nothing is sent and the delegator keeps the part; if its
                 sub-task ends without a verified finding, the answer's DEGRADED note names it
                 and the refusal

The chains are read from the run's own events, and the requests from the specialists' streams
as recorded, so a resumed or replayed run decides the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runtime.coordination.delegation import Delegations, Refused
from runtime.events import ToolDispatched, ToolReturned
from runtime.fanout.contracts import Handoff
from runtime.fanout.engine import worker_stream
from runtime.session import Session
from runtime.tools import Tool

TOOL = "team.delegate"
LEAD = "triage-lead"  # the harness, as the root of every chain


def tool(specialists: list[str]) -> Tool:
    """`team.delegate`: ask the harness to hand a part of this sub-task on."""
    return Tool(
        TOOL,
        "Ask to hand a part of your sub-task on to another specialist. The harness checks the "
        "delegation limits and, if they allow it, hands the part on after your report; the "
        "rest of your sub-task stays yours.",
        {
            "type": "object",
            "properties": {
                "to": {"enum": specialists, "description": "the specialist to hand it to"},
                "part": {"type": "string", "minLength": 1, "description": "the part, as a goal"},
            },
            "required": ["to", "part"],
            "additionalProperties": False,
        },
        lambda to, part: {
            "asked": to,
            "part": part,
            "note": "the harness decides after your report; go on with the rest yourself",
        },
    )


def requests(session: Session, sub_id: str, worker_id: str) -> list[tuple[str, str]]:
    """The parts the specialist asked to hand on (to, part), in order, from its own stream:
    calls that ran (a call refused by its schema asked nothing)."""
    stream = worker_stream(session.run_id, sub_id, worker_id)
    events = [r.event for r in session.source.read(stream)]
    ran = {e.call_id for e in events if isinstance(e, ToolReturned) and not e.error}
    return [
        (str(e.args["to"]), str(e.args["part"]))
        for e in events
        if isinstance(e, ToolDispatched) and e.tool == TOOL and e.call_id in ran and e.args
    ]


@dataclass
class Onward:
    """The run's delegation decisions: who holds each sub-task under which delegation, the
    parts handed on, and the refusals each sub-task met."""

    session: Session
    belts: dict[str, list[str]]
    max_depth: int
    order: dict[str, str] = field(default_factory=dict)  # the ticket's order, resolved
    held: dict[str, str] = field(default_factory=dict)  # sub-task -> its delegation's id
    refused: dict[str, list[str]] = field(default_factory=dict)  # sub-task -> why, per refusal

    def __post_init__(self) -> None:
        self.chains = Delegations(self.session, max_depth=self.max_depth)

    def decide(self, sub_id: str, handoff: Handoff) -> list[tuple[str, Handoff]]:
        """The parts of a reported sub-task that may be handed on, as hand-offs of their own
        (each checked, and journalled, before it is sent)."""
        parts: list[tuple[str, Handoff]] = []
        for n, (to, part) in enumerate(requests(self.session, sub_id, handoff.worker_id), 1):
            parent = self.held.get(sub_id)
            if parent is None:
                root = self.chains.delegate(LEAD, handoff.worker_id, task_id=sub_id)
                parent = self.held[sub_id] = root.delegation_id
            try:
                given = self.chains.delegate(handoff.worker_id, to, parent=parent, task_id=sub_id)
            except Refused as exc:
                self.refused.setdefault(sub_id, []).append(
                    f"its hand-on to {to} was refused ({exc.refused.rule}): {exc}"
                )
                continue
            part_id = f"{sub_id}.{n}"
            self.held[part_id] = given.delegation_id
            parts.append((part_id, self.handoff(handoff, to, part)))
        return parts

    def handoff(self, parent: Handoff, to: str, part: str) -> Handoff:
        """The part's brief: the delegator's inputs and limits, the delegate's own belt."""
        inputs: dict[str, Any] = {**parent.inputs, **self.order}
        return parent.revised(
            worker_id=to,
            objective=part,
            inputs=inputs,
            allowed_tools=[*self.belts[to], TOOL],
        )

    def noted(self, sub_id: str, note: str | None) -> str | None:
        """A degraded sub-task's note, with the refusals it met (they are why it kept work it
        did not do); None stays None: a sub-task with a verified finding is not degraded."""
        if note is None or sub_id not in self.refused:
            return note
        return "; ".join([note, *self.refused[sub_id]])


__all__ = ["LEAD", "TOOL", "Onward", "requests", "tool"]
