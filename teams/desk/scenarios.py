"""The support desk's scripted presets, by name (the first is the team's default)."""

from __future__ import annotations

from runtime.model import ModelResponse, call
from runtime.team import Scenario
from teams.desk.tools import ORDER_AGENT, SUPPORT_AGENT

DOUBLE_REFUND = Scenario(
    name="double-refund",
    description="The refund times out and the support agent retries it: one refund, one effect.",
    task="My parcel arrived broken. Please refund me in full. (order delivered two days ago)",
    settings={
        "desk": {
            "opening_status": "delivered",
            "feed": "Delivered two days ago, signed for by the customer. Nothing since.",
            "provider_latency": 1.0,
            "tool_timeout": 0.3,
        }
    },
    scripts={
        ORDER_AGENT: [
            call("read_order", 60),
            call("done", 40, outcome="unchanged", summary="delivered; nothing new to record"),
        ],
        SUPPORT_AGENT: [
            call("read_order", 70),
            call("issue_refund", 110, amount_cents=4999, reason="arrived broken"),
            call(
                "issue_refund", 90, amount_cents=4999, reason="the first attempt timed out: retry"
            ),
            call(
                "set_order_status",
                80,
                status="refunded",
                based_on=1,
                evidence="refunded in full: the parcel arrived broken",
            ),
            call("done", 50, outcome="refunded", summary="refunded 4999 cents once, status set"),
        ],
    },
)

LOST_UPDATE = Scenario(
    name="lost-update",
    description="Both agents decide the order's status from the same version and disagree: "
    "one write wins, the other is refused, and the conflict is parked for a person.",
    task="09:10 — please cancel my order, I picked the wrong size.",
    settings={"desk": {"feed": "09:12 — parcel handed to the carrier (scan DHL-7731)."}},
    scripts={
        ORDER_AGENT: [
            call(
                "set_order_status",
                70,
                status="shipped",
                based_on=1,
                evidence="carrier scan DHL-7731 at 09:12",
            ),
            call("done", 40, outcome="updated", summary="shipped at 09:12 per the carrier scan"),
        ],
        SUPPORT_AGENT: [
            call(
                "set_order_status",
                80,
                status="cancelled",
                based_on=1,
                evidence="the customer asked to cancel at 09:10, before dispatch",
            ),
            call("read_order", 50),
            call(
                "done",
                60,
                outcome="disputed",
                summary="the customer cancelled at 09:10, before the 09:12 dispatch: my claim "
                "stands and a person should decide",
            ),
        ],
    },
)

RE_DECIDE = Scenario(
    name="re-decide",
    description="As lost-update, but the support agent re-reads the order and decides again "
    "from the new version: no conflict is left.",
    task=LOST_UPDATE.task,
    settings=LOST_UPDATE.settings,
    scripts={
        ORDER_AGENT: LOST_UPDATE.scripts[ORDER_AGENT],
        SUPPORT_AGENT: [
            LOST_UPDATE.scripts[SUPPORT_AGENT][0],
            call("read_order", 50),
            call(
                "set_order_status",
                60,
                status="shipped",
                based_on=2,
                evidence="it shipped at 09:12; the customer can return it instead",
            ),
            call("done", 40, outcome="unchanged", summary="too late to cancel: offered a return"),
        ],
    },
)

BROKEN = "My parcel arrived broken. Please refund me in full. (order delivered two days ago)"


def decide(usage: int, decision: str, amount: int, reasons: str) -> ModelResponse:
    """One sample of the refund decision (teams/desk/vote.py)."""
    return call("done", usage, decision=decision, amount_cents=amount, reasons=reasons)


REFUND_VOTE = Scenario(
    name="refund-vote",
    description="The refund is decided by a vote of three independent samples: one wrongly "
    "refuses a broken parcel; the majority refunds it in full, the desk refunds once, and "
    "the vote's cost is billed on T2:vote.",
    task=BROKEN,
    settings={
        "votes": 3,
        "desk": {
            "opening_status": "delivered",
            "feed": "Delivered two days ago, signed for by the customer. Nothing since.",
        },
    },
    scripts={
        ORDER_AGENT: DOUBLE_REFUND.scripts[ORDER_AGENT],
        SUPPORT_AGENT: [
            call("read_order", 70),
            decide(40, "refund", 4999, "arrived broken: a full refund, 4999 cents"),
            # the wrong sample
            decide(45, "no_refund", 0, "it was delivered and signed for: nothing to refund"),
            call("read_order", 70),
            decide(40, "refund", 4999, "broken on arrival is refunded in full"),
            # its part after the vote: the status, then its report
            call(
                "set_order_status",
                80,
                status="refunded",
                based_on=1,
                evidence="refunded in full by vote: the parcel arrived broken",
            ),
            call("done", 50, outcome="refunded", summary="refunded 4999 cents by vote, status set"),
        ],
    },
)


def flips(agent_status: str, based_on: list[int], why: str) -> list[ModelResponse]:
    """An agent that, each round, reads the order and writes its own status back."""
    steps: list[ModelResponse] = []
    for version in based_on:
        steps += [
            call("read_order", 50),
            call("set_order_status", 60, status=agent_status, based_on=version, evidence=why),
            call("done", 40, outcome="updated", summary=f"set it to {agent_status} again"),
        ]
    return steps


FLIP_FLOP = Scenario(
    name="flip-flop",
    description="Given rounds to settle, the order agent keeps setting the order shipped and "
    "the support agent keeps setting it cancelled, each write a proper compare-and-swap: the "
    "status flips back and forth, the livelock watch stops the loop, and the run ends "
    "escalated for a person to settle.",
    task=LOST_UPDATE.task,
    settings={**LOST_UPDATE.settings, "rounds": 3},
    scripts={
        # Versions: the order opens at 1; each write moves it on by one.
        ORDER_AGENT: flips("shipped", [1, 3, 5], "carrier scan DHL-7731 at 09:12"),
        SUPPORT_AGENT: flips("cancelled", [2, 4, 6], "the customer cancelled at 09:10"),
    },
)

SCENARIOS = {s.name: s for s in (DOUBLE_REFUND, LOST_UPDATE, RE_DECIDE, REFUND_VOTE, FLIP_FLOP)}
