"""Diagnosis from the journal alone: one finding per failure signature, citing its events.

    duplicate_work            two agents set out to write the same file
    unanswered_request        a REQUEST was delivered and its recipient neither replied nor ran
    done_without_evidence     a coder said DONE with no passing test run after its last edit
    transient_error_absorbed  a tool call failed, and the same call later succeeded
    reject_cap_reached        a task went back and forth between coder and reviewer until the
                              round cap escalated it
    budget_exhausted          an agent ran out of budget with its task unfinished

Each signature is a fold (see `folds`), so a projector can keep findings current event by event.
Works on the reference runtime's flat journals too (no ids, no args, no ModelCalled).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from runtime import folds
from runtime.events import (
    BudgetExhausted,
    MessageDelivered,
    MessageSent,
    RunStarted,
    TaskEscalated,
    ToolDispatched,
    ToolReturned,
)
from runtime.folds import Fold, State, key, unkey
from runtime.journal import Recorded

Finding = dict[str, Any]
WRITES = ("edit_file", "write_file")


def finding(kind: str, summary: str, positions: list[int], **detail: Any) -> Finding:
    return {"kind": kind, "summary": summary, "positions": sorted(set(positions)), **detail}


def role(agent: str | None) -> str:
    """coder-a and coder-b are coders: a role is the name before any suffix."""
    return (agent or "").split("-")[0]


def is_coder(agent: str | None) -> bool:
    return role(agent) == "coder"


class DuplicateWork(Fold):
    name: ClassVar[str] = "duplicate_work"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("ToolDispatched", "ToolReturned"))

    def start(self) -> State:
        return {"writers": {}, "counted": {}}

    def step(self, state: State, rec: Recorded) -> None:
        e = rec.event
        path = None
        if isinstance(e, ToolDispatched) and e.tool in WRITES and e.args and "path" in e.args:
            path = str(e.args["path"])
            if e.call_id:
                state["counted"][key(e.agent, e.call_id)] = True
        elif isinstance(e, ToolReturned) and e.tool in WRITES and isinstance(e.result, dict):
            if e.call_id and key(e.agent, e.call_id) in state["counted"]:
                return  # already counted at its dispatch
            found = e.result.get("edited") or e.result.get("written")
            path = found if isinstance(found, str) else None
        if path is not None:
            by_agent = state["writers"].setdefault(path.lstrip("./"), {})
            by_agent.setdefault(e.agent or "?", []).append(rec.position)

    def result(self, state: State) -> list[Finding]:
        out = []
        for path, by_agent in sorted(state["writers"].items()):
            if len(by_agent) > 1:
                agents = sorted(by_agent)
                out.append(
                    finding(
                        "duplicate_work",
                        f"{' and '.join(agents)} all wrote to {path}",
                        [p for ps in by_agent.values() for p in ps],
                        artefact=path,
                        agents=agents,
                    )
                )
        return out


class UnansweredRequests(Fold):
    name: ClassVar[str] = "unanswered_request"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("MessageSent", "MessageDelivered", "RunStarted")
    )

    def start(self) -> State:
        return {"open": []}  # requests not yet answered, in order

    def step(self, state: State, rec: Recorded) -> None:
        e = rec.event
        if isinstance(e, MessageSent):
            self.close(state, e.sender, e.task_id or "-")  # any message from the recipient
            if e.performative.lower() == "request":
                state["open"].append(
                    {
                        "id": e.message_id,
                        "recipient": e.recipient,
                        "task": e.task_id or "-",
                        "positions": [rec.position],
                        "delivered": False,
                    }
                )
        elif isinstance(e, MessageDelivered) and not e.duplicate:
            for r in state["open"]:
                same = (
                    r["id"] == e.message_id
                    if e.message_id
                    else (r["recipient"] == e.recipient and r["task"] == (e.task_id or "-"))
                )
                if same and not r["delivered"]:
                    r["delivered"] = True
                    r["positions"].append(rec.position)
                    break
        elif isinstance(e, RunStarted):
            self.close(state, e.agent, e.task_id)  # reference runs name no task: any run counts

    @staticmethod
    def close(state: State, recipient: str | None, task: str | None) -> None:
        state["open"] = [
            r
            for r in state["open"]
            if not (r["delivered"] and r["recipient"] == recipient and task in (None, r["task"]))
        ]

    def result(self, state: State) -> list[Finding]:
        grouped: dict[tuple[str, str], list[int]] = {}
        for r in state["open"]:
            if r["delivered"]:
                grouped.setdefault((r["task"], r["recipient"]), []).extend(r["positions"])
        return [
            finding(
                "unanswered_request",
                f"{recipient} was sent a REQUEST on {task} and neither replied nor ran",
                positions,
                task_id=task,
                agents=[recipient],
            )
            for (task, recipient), positions in grouped.items()
        ]


class DoneWithoutEvidence(Fold):
    name: ClassVar[str] = "done_without_evidence"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("RunStarted", "ToolReturned", "MessageSent")
    )

    def start(self) -> State:
        return {"evidence": {}, "run_start": {}, "found": []}

    def step(self, state: State, rec: Recorded) -> None:
        e = rec.event
        if isinstance(e, RunStarted) and e.agent:
            state["evidence"][e.agent] = False
            state["run_start"][e.agent] = rec.position
        elif isinstance(e, ToolReturned) and e.agent and e.error is None:
            if e.tool in WRITES:
                state["evidence"][e.agent] = False  # tests before an edit say nothing about it
            elif e.tool == "run_tests":
                state["evidence"][e.agent] = True
        elif (
            isinstance(e, MessageSent)
            and e.performative.lower() == "done"
            and is_coder(e.sender)
            and not state["evidence"].get(e.sender, False)
        ):
            state["found"].append(
                finding(
                    "done_without_evidence",
                    f"{e.sender} said DONE on {e.task_id or '-'} without a passing test run after "
                    "its last edit",
                    [state["run_start"].get(e.sender, rec.position), rec.position],
                    task_id=e.task_id,
                    agents=[e.sender],
                )
            )

    def result(self, state: State) -> list[Finding]:
        return list(state["found"])


class TransientErrors(Fold):
    name: ClassVar[str] = "transient_error_absorbed"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("ToolDispatched", "ToolReturned"))

    def start(self) -> State:
        return {"args_of": {}, "failed": {}, "found": []}

    def step(self, state: State, rec: Recorded) -> None:
        e = rec.event
        if isinstance(e, ToolDispatched):
            state["args_of"][key(e.agent, e.call_id)] = e.args
        elif isinstance(e, ToolReturned):
            args = state["args_of"].get(key(e.agent, e.call_id)) if e.call_id else None
            call = key(e.agent, e.tool, sorted((args or {}).items()))
            if e.error is not None:
                state["failed"].setdefault(call, rec.position)
            elif call in state["failed"]:
                first = state["failed"].pop(call)
                state["found"].append(
                    finding(
                        "transient_error_absorbed",
                        f"{e.agent}'s {e.tool} failed and the same call later succeeded",
                        [first, rec.position],
                        agents=[e.agent],
                        tool=e.tool,
                    )
                )

    def result(self, state: State) -> list[Finding]:
        return list(state["found"])


class RejectCaps(Fold):
    name: ClassVar[str] = "reject_cap_reached"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("MessageSent", "TaskEscalated"))

    def start(self) -> State:
        return {"rejects": {}, "found": []}

    def step(self, state: State, rec: Recorded) -> None:
        e = rec.event
        task = e.task_id or "-"
        if (
            isinstance(e, MessageSent)
            and e.performative.lower() == "reject"
            and not is_coder(e.recipient)  # a contract-net REJECT of a bid is no review
        ):
            state["rejects"].setdefault(task, []).append(rec.position)
        elif isinstance(e, TaskEscalated) and e.cause == "reject_cap":
            rejects = state["rejects"].get(task, [])
            state["found"].append(
                finding(
                    "reject_cap_reached",
                    f"{task} was rejected {len(rejects)} times and escalated",
                    [*rejects, rec.position],
                    task_id=task,
                )
            )

    def result(self, state: State) -> list[Finding]:
        return list(state["found"])


class BudgetExhaustion(Fold):
    name: ClassVar[str] = "budget_exhausted"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("BudgetExhausted", "MessageSent"))

    def start(self) -> State:
        return {"halted": {}}

    def step(self, state: State, rec: Recorded) -> None:
        e = rec.event
        if isinstance(e, BudgetExhausted) and e.agent:
            state["halted"][key(e.agent, e.task_id or "-")] = rec.position
        elif isinstance(e, MessageSent) and e.performative.lower() == "done":
            state["halted"].pop(key(e.sender, e.task_id or "-"), None)

    def result(self, state: State) -> list[Finding]:
        out = []
        for pair, position in state["halted"].items():
            agent, task = unkey(pair)
            out.append(
                finding(
                    "budget_exhausted",
                    f"{agent} ran out of budget on {task} before finishing it",
                    [position],
                    task_id=task,
                    agents=[agent],
                )
            )
        return out


SIGNATURES: tuple[Fold, ...] = (
    DuplicateWork(),
    UnansweredRequests(),
    DoneWithoutEvidence(),
    TransientErrors(),
    RejectCaps(),
    BudgetExhaustion(),
)


class Diagnosis(Fold):
    """Every signature at once; the result is the findings in order of their first event."""

    name: ClassVar[str] = "findings"
    kinds: ClassVar[frozenset[str] | None] = frozenset().union(*(s.kinds or () for s in SIGNATURES))

    def start(self) -> State:
        return {s.name: s.start() for s in SIGNATURES}

    def step(self, state: State, rec: Recorded) -> None:
        kind = rec.event.kind
        for s in SIGNATURES:
            if s.kinds is None or kind in s.kinds:
                s.step(state[s.name], rec)

    def result(self, state: State) -> list[Finding]:
        found = [f for s in SIGNATURES for f in s.result(state[s.name])]
        return sorted(found, key=lambda f: f["positions"][0])


def diagnose(records: Sequence[Recorded]) -> list[Finding]:
    """Every finding in the run, in the order of the first event that shows it."""
    result: list[Finding] = folds.run(Diagnosis(), records)
    return result
