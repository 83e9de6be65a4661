"""The plan: a ticket split into three independent sub-tasks, one brief per specialist, and
what the team falls back on when one fails."""

from __future__ import annotations

import re

from runtime import loop
from runtime.fanout.contracts import Handoff
from runtime.fanout.routing import Cached, RecoveryPolicy
from teams.triage.onward import TOOL as DELEGATE

ORDERS, KB, POLICY = "orders-worker", "kb-worker", "policy-worker"
# Given no sub-task of its own: only parts another specialist hands on (teams/triage/onward.py).
RETURNS = "returns-worker"
BELTS = {
    ORDERS: ["orders.lookup_order", "orders.list_orders"],
    KB: ["kb.search"],
    POLICY: ["policy.check_refund_policy", "policy.policy_for"],
    RETURNS: ["orders.lookup_order"],
}
SYSTEM = (
    "You are a support specialist with a narrow brief. Use only your tools, cite the id of the "
    "tool call behind every finding, and finish by calling done with your report."
)
REPORT = loop.done_tool(
    {
        "worker_id": {"type": "string"},
        "status": {"enum": ["ok", "failed"]},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "claim": {"type": "string"},
                    "source_call_id": {"type": "string"},
                    "source_tool": {"type": "string"},
                },
                "required": ["claim", "source_call_id", "source_tool"],
            },
        },
        "reason": {"enum": ["budget", "tool_error", "ambiguous", "refused", None]},
        "degraded": {"type": ["string", "null"]},
    },
    required=["worker_id", "status"],
)
# What the policy specialist falls back on when the policy service fails: a snapshot of the
# refund rules, dated, so the answer can say what it rests on.
POLICY_SNAPSHOT = Cached(
    source="policy snapshot 2025-05 (cached copy of the refund rules)",
    text="Damaged items reported within 14 days of delivery are refunded in full to the "
    "original payment method; no return is needed when a photo shows the damage.",
)
ORDER_ID = re.compile(r"\b[A-Z]\d{4}\b")
# Who wrote the ticket, as the desk's tickets begin: "From grace@example.com: ...".
CUSTOMER = re.compile(r"\A\s*From\s+([^\s:@]+@[^\s:]+)\s*:", re.IGNORECASE)
POLICY_RULES = RecoveryPolicy(fallbacks={POLICY: POLICY_SNAPSHOT}, budget_retries=1)


def orders_of(task: str) -> list[str]:
    """The orders the ticket names, each once, in the order it names them."""
    return list(dict.fromkeys(ORDER_ID.findall(task)))


def order_of(task: str) -> dict[str, str]:
    """The ticket's order, as a resolved input (empty: the ticket names none, or more than
    one, and which it is about is not resolved: "not A1001 but B2002" is about the second)."""
    named = orders_of(task)
    return {"order_id": named[0]} if len(named) == 1 else {}


def customer_of(task: str) -> str | None:
    """The ticket's writer's address (None: the ticket does not say who wrote it)."""
    found = CUSTOMER.match(task)
    return found.group(1).lower() if found else None


def handoffs(
    task: str, steps: int, tokens: int, deadline: float, delegate: bool = False
) -> list[tuple[str, Handoff]]:
    """The plan: three independent sub-tasks, each with its own resolved inputs; with
    `delegate`, each specialist may ask to hand a part of its sub-task on."""
    order = order_of(task)
    plan = [
        (ORDERS, "Find the order's status, items and any note about the customer's problem."),
        (KB, "Find the help articles that apply to this ticket."),
        (POLICY, "Say whether refunding this order's total is within the refund policy."),
    ]
    return [
        (
            f"S{n}",
            Handoff(
                worker_id=worker,
                objective=objective,
                inputs={"ticket": task, **(order if worker != KB else {})},
                allowed_tools=[*BELTS[worker], *([DELEGATE] if delegate else [])],
                max_steps=steps,
                max_tokens=tokens,
                return_contract="findings that each cite the tool call they rest on",
                deadline_seconds=deadline,
            ),
        )
        for n, (worker, objective) in enumerate(plan, 1)
    ]


def unavailable(handoff: Handoff, degraded: dict[str, str]) -> str | None:
    """Why none of the specialist's tools can work (every server on its belt is degraded)."""
    servers = {name.split(".", 1)[0] for name in handoff.allowed_tools}
    if servers and servers <= set(degraded):
        return "; ".join(f"server {s} is degraded: {degraded[s]}" for s in sorted(servers))
    return None
