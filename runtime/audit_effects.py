"""The audit's money steps: each effect a run performed (a refund, say), who decided it, for how
much, and what the provider's ledger holds for it, as one audit entry that follows its outcome.

An effect is journalled on its own stream (`effect-<key>`: EffectStarted, an EffectResumed
for each performer that took it over unsettled to send it again, then EffectSucceeded or
EffectFailed) and names no agent: the decision is the tool call in flight when it started
(the agent's `issue_refund`, whose arguments carry the amount and the reason). So the fold keeps
each lane's open tool call, and each started effect until its outcome; nothing more. A saga's
steps and their reversals are audited from the saga's own events (SagaStepCompleted,
SagaCompensated), which say more than their effects do, so those effects are left to them.
"""

from __future__ import annotations

from typing import Any

from runtime import folds
from runtime.events import (
    EffectFailed,
    EffectResumed,
    EffectStarted,
    EffectSucceeded,
    ToolDispatched,
    ToolReturned,
)
from runtime.folds import State
from runtime.journal import Recorded

KINDS = frozenset(
    (
        "ToolDispatched",
        "ToolReturned",
        "EffectStarted",
        "EffectResumed",
        "EffectSucceeded",
        "EffectFailed",
    )
)
SAGA = "saga-"  # effect types a saga's own events audit (saga-step, saga-compensation)


def amount_of(value: Any) -> int | None:
    """The amount in cents a payload or a provider's answer names, if it names one."""
    if isinstance(value, dict):
        cents = value.get("amount_cents")
        if isinstance(cents, int) and not isinstance(cents, bool):
            return cents
    return None


def ledger_entry(result: Any) -> dict[str, Any]:
    """What the provider recorded, as its ids: `refund_id`, `credit_id`, `reversed`..."""
    if not isinstance(result, dict):
        return {}
    return {
        k: v
        for k, v in result.items()
        if isinstance(v, str)
        and (k.endswith("_id") or k in ("reversed", "voided"))
        and k != "order_id"
    }


def step(state: State, rec: Recorded, out: folds.Out) -> bool:
    """Take one event of `KINDS`; True when it was one (the audit need look no further)."""
    e = rec.event
    calls: dict[str, Any] = state.setdefault("calls", {})
    effects: dict[str, Any] = state.setdefault("effects", {})
    if isinstance(e, ToolDispatched):
        args = e.args or {}
        calls[rec.stream] = {
            "agent": e.agent,
            "task_id": e.task_id,
            "tool": e.tool,
            "call_id": e.call_id,
            "amount_cents": amount_of(args),
            "reason": str(args.get("reason") or "")[:300],
        }
    elif isinstance(e, ToolReturned):
        open_ = calls.get(rec.stream)
        if open_ is not None and open_["call_id"] == e.call_id:
            calls.pop(rec.stream)
    elif isinstance(e, EffectStarted):
        if e.effect_type.startswith(SAGA):
            return True
        # The decision: the tool call open when the effect started (the newest, should agents
        # on parallel streams have several open).
        call = next(reversed(calls.values()), None) if calls else None
        entry: dict[str, Any] = {
            "position": rec.position,
            "what": e.effect_type,
            "who": e.agent or (call or {}).get("agent") or "?",
            "task_id": e.task_id or (call or {}).get("task_id"),
            "effect": {
                "key": e.key,
                "target": e.target,
                "outcome": "in flight",
                "amount_cents": (call or {}).get("amount_cents"),
                "call": (call or {}).get("call_id"),
                "tool": (call or {}).get("tool"),
                "started": rec.position,
                "intent": e.intent_id,
            },
        }
        if call and call.get("reason"):
            entry["why"] = call["reason"]
        effects[e.key] = entry
        out.add(rec.position, entry)
    elif isinstance(e, EffectResumed):
        # Sent again under its key by a performer that took it over (its first one was gone):
        # still the one decision, and still in flight; the entry says where it was taken over.
        taken = effects.get(e.key)
        if taken is not None:
            taken["effect"]["resumed"] = rec.position
            out.put(taken["position"], taken)
    elif isinstance(e, EffectSucceeded | EffectFailed):
        entry = effects.pop(e.key, None)
        if entry is None:
            return True  # a saga's, or an effect started before this journal's first event
        effect = entry["effect"]
        effect["settled"] = rec.position
        effect["reconciled"] = e.reconciled
        if isinstance(e, EffectSucceeded):
            effect["outcome"] = "succeeded"
            effect["ledger"] = ledger_entry(e.result)
            effect["amount_cents"] = amount_of(e.result) or effect["amount_cents"]
        else:
            effect["outcome"] = "failed"
            effect["error"] = str(e.error)
        out.put(entry["position"], entry)
    else:
        return False
    return True
