"""The support-triage team's scripted presets, by name (the first is the team's default)."""

from __future__ import annotations

from typing import Any

from runtime.model import call
from runtime.team import Scenario
from teams.triage.onward import TOOL as DELEGATE
from teams.triage.plan import KB, ORDERS, POLICY, RETURNS

TICKET = (
    "From grace@example.com: the desk lamp from order B2001 arrived with a cracked shade. "
    "Can I get my money back?"
)


def report_of(worker: str, findings: list[tuple[str, str, str]], **extra: Any) -> Any:
    return call(
        "done",
        60,
        worker_id=worker,
        status="ok",
        findings=[{"claim": c, "source_call_id": i, "source_tool": t} for c, i, t in findings],
        **extra,
    )


SCRIPTS = {
    ORDERS: [
        call("orders.lookup_order", 90, order_id="B2001"),
        report_of(
            ORDERS,
            [
                (
                    "Order B2001 was delivered on 2025-04-18: one desk lamp, 3900 cents.",
                    "orders-worker-1-1",
                    "orders.lookup_order",
                ),
                (
                    "The order notes the lamp arrived with a cracked shade.",
                    "orders-worker-1-1",
                    "orders.lookup_order",
                ),
            ],
        ),
    ],
    KB: [
        call("kb.search", 80, query="damaged item refund"),
        report_of(
            KB,
            [
                (
                    "KB-104 (Damaged or broken items): report damage within 14 days of delivery "
                    "with a photo.",
                    "kb-worker-1-1",
                    "kb.search",
                ),
                (
                    "KB-999 says damaged lamps are replaced the same day.",  # made up: dropped
                    "kb-worker-1-1",
                    "kb.search",
                ),
            ],
        ),
    ],
    POLICY: [
        call("policy.check_refund_policy", 90, order_id="B2001", amount_cents=3900),
        call("policy.policy_for", 70, topic="damaged items"),
        call(
            "done",
            50,
            worker_id=POLICY,
            status="failed",
            reason="tool_error",
            degraded="the policy service refused every call",
        ),
    ],
}

TRIAGE = Scenario(
    name="broken-policy",
    description="Three specialists at once; the policy server fails every call, so the answer "
    "rests on a cached policy and says DEGRADED; one made-up finding is dropped.",
    task=TICKET,
    scripts=SCRIPTS,
)

REFUND_SAGA = Scenario(
    name="refund-saga",
    description="As broken-policy, then the refund as a saga (the ticket came a week after "
    "the lamp's delivery, within the return window; the refund rests on the cached policy): "
    "label and credit go through, recording the decision at policy fails, so the credit and "
    "the label are undone, in reverse, once each.",
    task=TICKET,
    scripts=SCRIPTS,
    # The orders book's world is in 2025: the ticket's day is set, not the machine's.
    settings={"refund": True, "received_on": "2025-04-25"},
)

RUNAWAY_SPEND = Scenario(
    name="runaway-spend",
    description="The knowledge-base specialist keeps searching with long, expensive answers: "
    "the run's spend breaker trips, its next call is refused, and the sub-task is escalated.",
    task=TICKET,
    scripts={
        **SCRIPTS,
        KB: [call("kb.search", 1200, query=f"damaged item refund, try {n}") for n in range(6)]
        + [SCRIPTS[KB][-1]],
    },
    settings={"spend_rate": 150.0, "allowance": 40_000},
)

LIAR = Scenario(
    name="liar",
    description="The policy specialist's calls all fail, yet it reports ok, citing them: the "
    "harness drops the unsupported findings and the answer says DEGRADED, naming the policy "
    "question, though the worker never said it failed.",
    task=TICKET,
    scripts={
        **SCRIPTS,
        POLICY: [
            *SCRIPTS[POLICY][:2],
            report_of(
                POLICY,
                [
                    (
                        "Refunding 3900 cents for order B2001 is within the refund policy.",
                        "policy-worker-1-1",
                        "policy.check_refund_policy",
                    ),
                    (
                        "Damaged items are refunded in full.",
                        "policy-worker-2-1",
                        "policy.policy_for",
                    ),
                ],
            ),
        ],
    },
)

LOOPING = Scenario(
    name="looping-agent",
    description="The knowledge-base specialist asks the same search again and again: the "
    "third identical call trips the loop breaker, which stops it; with no cache to fall back "
    "on, its sub-task is escalated, and the answer says the loop breaker stopped it.",
    task=TICKET,
    scripts={
        **SCRIPTS,
        KB: [call("kb.search", 80, query="damaged item refund") for _ in range(5)]
        + [SCRIPTS[KB][-1]],
    },
)

# --- onward delegation (teams/triage/onward.py) -------------------------------------------------

WINDOW = "Find when order B2001 was delivered: KB-104's 14 days count from that day."
# The knowledge-base specialist finds the article and hands the date it turns on to the
# returns specialist: its search is call 1, its hand-on call 2, its report call 3.
KB_HANDS_ON = [
    SCRIPTS[KB][0],
    call(DELEGATE, 40, to=RETURNS, part=WINDOW),
    report_of(
        KB,
        [
            (
                "KB-104 (Damaged or broken items): report damage within 14 days of delivery "
                "with a photo.",
                "kb-worker-1-1",
                "kb.search",
            )
        ],
    ),
]
RETURNS_LOOKS_UP = [
    call("orders.lookup_order", 90, order_id="B2001"),
    report_of(
        RETURNS,
        [("Order B2001 was delivered on 2025-04-18.", "returns-worker-1-1", "orders.lookup_order")],
    ),
]

ONWARD = Scenario(
    name="onward-delegation",
    description="The knowledge-base specialist hands the delivery date its article turns on "
    "to the returns specialist: within the depth limit, so it is handed off, run and checked "
    "like any sub-task, and its finding joins the answer.",
    task=TICKET,
    scripts={**SCRIPTS, KB: KB_HANDS_ON, RETURNS: RETURNS_LOOKS_UP},
    settings={"delegate": True},
)

HAND_BACK = Scenario(
    name="delegation-cycle",
    description="The returns specialist, handed a part by the knowledge-base specialist, "
    "tries to hand it back: a cycle, refused before it is sent; with no verified finding of "
    "its own, its part ends DEGRADED, naming it and the refusal.",
    task=TICKET,
    scripts={
        **SCRIPTS,
        KB: KB_HANDS_ON,
        RETURNS: [
            call(DELEGATE, 40, to=KB, part="Find which article says what the 14 days count from."),
            report_of(RETURNS, []),
        ],
    },
    settings={"delegate": True},
)

TOO_DEEP = Scenario(
    name="delegation-too-deep",
    description="With chains limited to two delegations, the returns specialist's hand-on "
    "to the orders specialist would be the third: refused; it keeps the part and answers it "
    "from its own lookup.",
    task=TICKET,
    scripts={
        **SCRIPTS,
        KB: KB_HANDS_ON,
        RETURNS: [
            call(DELEGATE, 40, to=ORDERS, part="Check the order's delivery date."),
            call("orders.lookup_order", 90, order_id="B2001"),
            report_of(
                RETURNS,
                [
                    (
                        "Order B2001 was delivered on 2025-04-18.",
                        "returns-worker-2-1",
                        "orders.lookup_order",
                    )
                ],
            ),
        ],
    },
    settings={"delegate": True, "delegation_depth": 2},
)


SCENARIOS = {
    s.name: s
    for s in (TRIAGE, REFUND_SAGA, RUNAWAY_SPEND, LIAR, LOOPING, ONWARD, HAND_BACK, TOO_DEEP)
}
