"""What a refund must show before money moves, beside the order being the ticket writer's: the
ticket names one order, the order was delivered, the ticket came within the return window of
its delivery, and the policy specialist said the refund is within policy. Each is a piece of
the mutation gate's evidence (teams/triage/saga.py), found in the record, not taken from what
anybody wrote: a ticket may name any order and say anything."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from runtime.coordination.mutation import Evidence
from runtime.events import Event
from runtime.fanout import verify
from runtime.fanout.contracts import Handoff
from runtime.fanout.settle import Answer

# KB-104 (damaged or broken items) and the cached refund rules (plan.POLICY_SNAPSHOT): a
# refund in full is for an item reported within 14 days of its delivery.
RETURN_DAYS = 14
# An order not yet delivered is not returned: processing, it is cancelled (KB-105); shipped
# or delayed, the carrier is asked (KB-103). Refunded already, it takes no more.
REFUNDABLE = "delivered"
CHECK = "policy.check_refund_policy"


def one_order(orders: list[str]) -> Evidence:
    """The ticket names one order: with two, which one the customer means is theirs to say,
    and the first named was refunded, in "not A1001 but B2002" the wrong one."""
    return Evidence(
        "the ticket names one order",
        len(orders) == 1,
        f"the ticket names {len(orders)} orders ({', '.join(orders)}): "
        "the customer is asked which one is to be refunded",
    )


def delivered(order_id: str, order: dict[str, Any]) -> Evidence:
    status = order.get("status")
    return Evidence(
        f"order {order_id} is {REFUNDABLE}",
        status == REFUNDABLE,
        f"order {order_id} is {status}, not {REFUNDABLE}: only a delivered order is refunded",
    )


def within_window(order_id: str, order: dict[str, Any], received_on: date) -> Evidence:
    """The ticket (received on `received_on`, the run's day) came at most RETURN_DAYS after
    the order's delivery."""
    ref = f"order {order_id} is within its {RETURN_DAYS}-day return window"
    raw = order.get("delivered_on")
    try:
        on = date.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        on = None
    if on is None:
        said = f"({raw!r})" if raw is not None else "in the orders book: it was not delivered"
        return Evidence(ref, False, f"order {order_id} has no delivery date {said}")
    last = on + timedelta(days=RETURN_DAYS)
    if received_on < on:
        why = f"the ticket came on {received_on}, before order {order_id}'s delivery on {on}"
    else:
        why = (
            f"order {order_id} was delivered on {on}: its return window closed on {last}, "
            f"the ticket came on {received_on}"
        )
    return Evidence(ref, on <= received_on <= last, why)


def day_of(t: float) -> date:
    """The UTC day of a journal time (an event's `t`)."""
    return datetime.fromtimestamp(t, UTC).date()


def policy_verdict(
    order_id: str,
    handoff: Handoff | None,
    answer: Answer | None,
    worker_events: Iterable[Event],
) -> Evidence:
    """The policy specialist's verdict on refunding the order: a verified finding of its (one
    its own tool results back, as settling checked) citing its call of CHECK, whose recorded
    answer says `eligible` for this order (a finding's words are the model's; the answer is
    the policy service's). With no such finding, the cached refund rules its part fell back
    on when it failed (the policy service down, as in every built-in scenario) are the
    verdict: they are the rules the other pieces check (delivered, within the window), and
    the reason says the refund rests on them. Neither (its findings unsupported, its part
    escalated) is no verdict, and no money moves: a person decides."""
    ref = f"the policy specialist found refunding order {order_id} within policy"
    if handoff is None or answer is None:
        return Evidence(ref, False, "the policy specialist was not asked")
    report, note, cached = answer
    cited = [f.source_call_id for f in report.findings if f.source_tool == CHECK]
    results = verify.tool_results(worker_events, handoff.worker_id)
    verdicts = [read(results[c].result) for c in cited if c in results]
    mine = [v for v in verdicts if str(v.get("order_id", "")).upper() == order_id]
    if not report.ok or not mine:
        if cached is not None:
            return Evidence(
                f"the refund rules of {cached.source}, the policy service giving none", True
            )
        return Evidence(
            ref,
            False,
            f"the policy specialist gave no verdict on refunding order {order_id}"
            + (f" ({note})" if note else ""),
        )
    refusing = [v for v in mine if v.get("eligible") is not True]
    why = "; ".join(str(v.get("why") or "no reason given") for v in refusing)
    return Evidence(
        ref, not refusing, f"the policy service found order {order_id} not eligible: {why}"
    )


def read(result: Any) -> dict[str, Any]:
    """A tool's recorded answer as a dict ({} for anything else): as the surface returned it,
    or as its JSON text."""
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except ValueError:
            return {}
    return result if isinstance(result, dict) else {}
