"""Views: pure folds over a run's events. State is a view; it can be thrown away and rebuilt.

Each view takes the run's records in order (Recorded, so it can cite positions) and returns
plain JSON-ready data. They read journals of the reference runtime too: lines without a
version, without ModelCalled or BudgetDebited, without message ids.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from runtime.diagnose import diagnose, is_coder
from runtime.events import (
    AgentFinished,
    BudgetAllocated,
    BudgetDebited,
    Integrated,
    IntegrationRefused,
    MessageDelivered,
    MessageSent,
    ModelResponded,
    RunInterrupted,
    RunResumed,
    RunStarted,
    SuiteChecked,
    TaskEscalated,
    TeamFinished,
    TeamStarted,
)
from runtime.journal import Recorded

Records = Sequence[Recorded]


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def bill(records: Records) -> dict[str, Any]:
    """Tokens and calls per agent and per task, and the budget: allowance, spent, remaining.

    Tokens come from ModelResponded.usage, so a journal without BudgetDebited still bills;
    `spent` is the budget ledger's sum of BudgetDebited (or the usage total when there is no
    ledger), and `balanced` says whether the two agree.
    """
    agents: dict[str, dict[str, int]] = defaultdict(lambda: {"tokens": 0, "calls": 0})
    tasks: dict[str, dict[str, int]] = defaultdict(lambda: {"tokens": 0, "calls": 0})
    allowance: int | None = None
    debited = 0
    has_ledger = False
    ledgers: dict[str, dict[str, Any]] = {}
    debited_by: dict[str, int] = defaultdict(int)
    for rec in records:
        e = rec.event
        if isinstance(e, ModelResponded):
            for row in (agents[e.agent or "?"], tasks[e.task_id or "-"]):
                row["tokens"] += e.usage.total
                row["calls"] += 1
        elif isinstance(e, BudgetDebited):
            has_ledger = True
            debited += e.amount
            debited_by[e.agent or "?"] += e.amount
        elif isinstance(e, TeamStarted):
            value = e.config.get("allowance")
            allowance = value if isinstance(value, int) else None
        elif isinstance(e, BudgetAllocated):
            ledgers[e.name] = {"allowance": e.allowance, "parent": e.parent, "reserve": e.reserve}
    total = sum(row["tokens"] for row in agents.values())
    spent = debited if has_ledger else total

    def rows(table: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:
        return {k: {**v, "share": _share(v["tokens"], total)} for k, v in sorted(table.items())}

    for name, ledger in ledgers.items():
        spent_here = debited if ledger["parent"] is None else debited_by.get(name, 0)
        ledger.update(spent=spent_here, remaining=ledger["allowance"] - spent_here)
    return {
        "agents": rows(agents),
        "tasks": rows(tasks),
        "ledgers": ledgers,
        "total": {"tokens": total, "calls": sum(r["calls"] for r in agents.values())},
        "allowance": allowance,
        "spent": spent,
        "remaining": None if allowance is None else allowance - spent,
        "balanced": spent == total,
    }


def threads(records: Records) -> dict[str, list[dict[str, Any]]]:
    """Messages grouped by task thread, in order, each with its performative and delivery."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_id: dict[str, dict[str, Any]] = {}
    for rec in records:
        e = rec.event
        if isinstance(e, MessageSent):
            entry = {
                "position": rec.position,
                "message_id": e.message_id,
                "performative": e.performative.upper(),
                "sender": e.sender,
                "recipient": e.recipient,
                "payload": e.payload,
                "delivered": False,
            }
            out[e.task_id or "-"].append(entry)
            if e.message_id:
                by_id[e.message_id] = entry
        elif isinstance(e, MessageDelivered):
            entry_or_none = by_id.get(e.message_id or "")
            if entry_or_none is None:
                # Reference journals carry no ids: the delivery belongs to the newest undelivered
                # message to that recipient on that thread.
                entry_or_none = next(
                    (
                        m
                        for m in reversed(out[e.task_id or "-"])
                        if m["recipient"] == e.recipient and not m["delivered"]
                    ),
                    None,
                )
            if entry_or_none is not None:
                entry_or_none["delivered"] = True
    return dict(out)


def audit(records: Records) -> list[dict[str, Any]]:
    """Who approved or rejected what on which evidence, every integration with the approval it
    relied on, every refusal and escalation, the harness's own checks, and every human decision.
    """
    entries: list[dict[str, Any]] = []
    message_at: dict[str, int] = {}
    for rec in records:
        e = rec.event
        entry: dict[str, Any] = {"position": rec.position, "what": e.kind, "task_id": e.task_id}
        if isinstance(e, MessageSent):
            if e.message_id:
                message_at[e.message_id] = rec.position
            if e.performative.lower() not in ("accept", "reject"):
                continue
            entry.update(
                what=e.performative.upper(), who=e.sender, to=e.recipient, evidence=e.payload
            )
        elif isinstance(e, Integrated):
            entry.update(
                who="harness",
                commit=e.commit,
                branch=e.branch,
                approval=e.approval,
                approved_by=e.approved_by,
                approval_position=message_at.get(e.approval),
            )
        elif isinstance(e, IntegrationRefused | TaskEscalated):
            entry.update(who="harness", why=e.reason)
        elif isinstance(e, RunInterrupted | RunResumed):
            entry.update(who=e.by, human=True, why=e.reason, when=e.t)
        elif isinstance(e, SuiteChecked):
            entry.update(
                who="harness", evidence={"passed": e.passed, "failed": e.failed, "ok": e.ok}
            )
        elif isinstance(e, TeamFinished):
            entry.update(what=f"TeamFinished:{e.status}", who="harness", why=e.reason)
        else:
            continue
        entries.append(entry)
    return entries


STAGES = ("plan", "fix", "review", "verify", "complete")


def role(agent: str | None) -> str:
    """coder-a and coder-b are coders: a role is the name before any suffix."""
    return (agent or "").split("-")[0]


def resume_point(records: Records) -> dict[str, Any]:
    """The stage the run stands at (what comes next) and the position it resumes after."""
    stage = "plan"
    solo = not any(isinstance(r.event, MessageSent) for r in records)
    for rec in records:
        e = rec.event
        if isinstance(e, TeamFinished):
            stage = "complete"
        elif isinstance(e, MessageSent):
            p = e.performative.lower()
            reviewer = role(e.sender) == "reviewer"  # a contract-net award is not a review
            if (p == "request" and is_coder(e.recipient)) or (p == "reject" and reviewer):
                stage = "fix"
            elif p == "done" and is_coder(e.sender):
                stage = "review"
            elif p == "accept" and reviewer:
                stage = "verify"
        elif isinstance(e, RunStarted) and is_coder(e.agent) and stage == "plan":
            stage = "fix"
        elif isinstance(e, AgentFinished) and is_coder(e.agent) and stage == "fix" and solo:
            stage = "verify"  # a solo run: nobody reviews, the harness checks the suite next
    last = records[-1] if records else None
    return {
        "stage": stage,
        "position": last.position if last else 0,
        "version": last.version if last else 0,
    }


def status(records: Records) -> str:
    """running, interrupted, or the harness's verdict."""
    for rec in reversed(records):
        e = rec.event
        if isinstance(e, TeamFinished):
            return e.status
        if isinstance(e, RunInterrupted):
            return "interrupted"
        if isinstance(e, RunResumed):
            break
    return "running"


def all_views(records: Records) -> dict[str, Any]:
    return {
        "status": status(records),
        "bill": bill(records),
        "threads": threads(records),
        "audit": audit(records),
        "resume_point": resume_point(records),
        "findings": diagnose(records),
    }
