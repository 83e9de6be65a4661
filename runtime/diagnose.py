"""Diagnosis from the journal alone: one finding per failure signature, citing its events.

    duplicate_work            two agents set out to write the same file
    unanswered_request        a REQUEST was delivered and its recipient neither replied nor ran
    done_without_evidence     a coder said DONE with no passing test run after its last edit
    transient_error_absorbed  a tool call failed, and the same call later succeeded
    reject_cap_reached        a task went back and forth between coder and reviewer until the
                              round cap escalated it
    budget_exhausted          an agent ran out of budget with its task unfinished

Works on the reference runtime's flat journals too (no ids, no args, no ModelCalled).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from runtime.events import (
    BudgetExhausted,
    MessageDelivered,
    MessageSent,
    RunStarted,
    TaskEscalated,
    ToolDispatched,
    ToolReturned,
)
from runtime.journal import Recorded

Finding = dict[str, Any]
WRITES = ("edit_file", "write_file")


def finding(kind: str, summary: str, positions: list[int], **detail: Any) -> Finding:
    return {"kind": kind, "summary": summary, "positions": sorted(set(positions)), **detail}


def is_coder(agent: str | None) -> bool:
    return bool(agent) and (agent or "").split("-")[0] == "coder"


def duplicate_work(records: Sequence[Recorded]) -> list[Finding]:
    writers: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    dispatched_args: set[tuple[str | None, str | None]] = set()
    for rec in records:
        e = rec.event
        if isinstance(e, ToolDispatched) and e.tool in WRITES and e.args and "path" in e.args:
            writers[str(e.args["path"]).lstrip("./")][e.agent or "?"].append(rec.position)
            dispatched_args.add((e.agent, e.call_id))
        elif isinstance(e, ToolReturned) and e.tool in WRITES and isinstance(e.result, dict):
            if (e.agent, e.call_id) in dispatched_args and e.call_id:
                continue  # already counted at its dispatch
            path = e.result.get("edited") or e.result.get("written")
            if isinstance(path, str):
                writers[path.lstrip("./")][e.agent or "?"].append(rec.position)
    out = []
    for path, by_agent in sorted(writers.items()):
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


def unanswered_requests(records: Sequence[Recorded]) -> list[Finding]:
    open_: list[dict[str, Any]] = []  # requests not yet answered, in order

    def close(recipient: str | None, task: str | None) -> None:
        open_[:] = [
            r
            for r in open_
            if not (r["delivered"] and r["recipient"] == recipient and task in (None, r["task"]))
        ]

    for rec in records:
        e = rec.event
        if isinstance(e, MessageSent):
            close(e.sender, e.task_id or "-")  # any message from the recipient on the thread
            if e.performative.lower() == "request":
                open_.append(
                    {
                        "id": e.message_id,
                        "recipient": e.recipient,
                        "task": e.task_id or "-",
                        "positions": [rec.position],
                        "delivered": False,
                    }
                )
        elif isinstance(e, MessageDelivered) and not e.duplicate:
            for r in open_:
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
            close(e.agent, e.task_id)  # reference journals' runs name no task: any run counts
    grouped: dict[tuple[str, str], list[int]] = defaultdict(list)
    for r in open_:
        if r["delivered"]:
            grouped[(r["task"], r["recipient"])].extend(r["positions"])
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


def done_without_evidence(records: Sequence[Recorded]) -> list[Finding]:
    out = []
    evidence: dict[str, bool] = {}
    run_start: dict[str, int] = {}
    for rec in records:
        e = rec.event
        if isinstance(e, RunStarted) and e.agent:
            evidence[e.agent] = False
            run_start[e.agent] = rec.position
        elif isinstance(e, ToolReturned) and e.agent and e.error is None:
            if e.tool in WRITES:
                evidence[e.agent] = False  # tests run before an edit say nothing about it
            elif e.tool == "run_tests":
                evidence[e.agent] = True
        elif (
            isinstance(e, MessageSent)
            and e.performative.lower() == "done"
            and is_coder(e.sender)
            and not evidence.get(e.sender, False)
        ):
            out.append(
                finding(
                    "done_without_evidence",
                    f"{e.sender} said DONE on {e.task_id or '-'} without a passing test run after "
                    "its last edit",
                    [run_start.get(e.sender, rec.position), rec.position],
                    task_id=e.task_id,
                    agents=[e.sender],
                )
            )
    return out


def transient_errors(records: Sequence[Recorded]) -> list[Finding]:
    args_of: dict[tuple[str | None, str | None], Any] = {}
    failed: dict[tuple[str | None, str, str], int] = {}  # (agent, tool, args) -> position
    out = []
    for rec in records:
        e = rec.event
        if isinstance(e, ToolDispatched):
            args_of[(e.agent, e.call_id)] = e.args
        elif isinstance(e, ToolReturned):
            args = args_of.get((e.agent, e.call_id)) if e.call_id else None
            key = (e.agent, e.tool, repr(sorted((args or {}).items())))
            if e.error is not None:
                failed.setdefault(key, rec.position)
            elif key in failed:
                first = failed.pop(key)
                out.append(
                    finding(
                        "transient_error_absorbed",
                        f"{e.agent}'s {e.tool} failed and the same call later succeeded",
                        [first, rec.position],
                        agents=[e.agent],
                        tool=e.tool,
                    )
                )
    return out


def reject_caps(records: Sequence[Recorded]) -> list[Finding]:
    rejects: dict[str, list[int]] = defaultdict(list)
    out = []
    for rec in records:
        e = rec.event
        if (
            isinstance(e, MessageSent)
            and e.performative.lower() == "reject"
            and not is_coder(e.recipient)
        ):
            rejects[e.task_id or "-"].append(rec.position)
        elif isinstance(e, TaskEscalated) and e.cause == "reject_cap":
            task = e.task_id or "-"
            out.append(
                finding(
                    "reject_cap_reached",
                    f"{task} was rejected {len(rejects[task])} times and escalated",
                    [*rejects[task], rec.position],
                    task_id=task,
                )
            )
    return out


def budget_exhausted(records: Sequence[Recorded]) -> list[Finding]:
    halted: dict[tuple[str, str], int] = {}
    for rec in records:
        e = rec.event
        if isinstance(e, BudgetExhausted) and e.agent:
            halted[(e.agent, e.task_id or "-")] = rec.position
        elif isinstance(e, MessageSent) and e.performative.lower() == "done":
            halted.pop((e.sender, e.task_id or "-"), None)
    return [
        finding(
            "budget_exhausted",
            f"{agent} ran out of budget on {task} before finishing it",
            [position],
            task_id=task,
            agents=[agent],
        )
        for (agent, task), position in halted.items()
    ]


SIGNATURES = (
    duplicate_work,
    unanswered_requests,
    done_without_evidence,
    transient_errors,
    reject_caps,
    budget_exhausted,
)


def diagnose(records: Sequence[Recorded]) -> list[Finding]:
    """Every finding in the run, in the order of the first event that shows it."""
    found = [f for signature in SIGNATURES for f in signature(records)]
    return sorted(found, key=lambda f: f["positions"][0])
