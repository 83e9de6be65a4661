"""The refund decision by vote (seed 04): a critical decision taken as independent samples.

With `votes` 3 or 5, the support agent does not refund on its own word. The harness first asks
it that many times, each a fresh run that sees the ticket and the order and no other sample,
for a decision only (refund and how much, or no refund) with read-only tools: a sample cannot
move money. The majority decides and VoteTaken journals every verdict, the winner, and the
minority with its reasons, kept as evidence. Only then, and only on a majority to refund, the
harness refunds once, through the agent's own `issue_refund` tool (so the effect ledger, its
idempotency key and the harness's checks treat it like any refund), and the support agent goes
on to its part without that tool. No majority (every sample different, or too few answers)
refunds nothing and goes to a person.

The first sample is asked on T2, the support agent's task; the others on `T2:vote`, so the bill
shows what the vote cost on a line of its own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from runtime import loop
from runtime.budget import Budget
from runtime.events import VoteTaken
from runtime.model import ModelClient, ToolCall
from runtime.session import Session
from runtime.team import FlightConfig
from runtime.tools import Outcome, Toolbox
from teams.desk.tools import SUPPORT_AGENT, DeskTools

TASK = "T2"
NO_MAJORITY = "no majority"
NO_ANSWER = "no answer"  # a sample whose run ended without a decision

DECIDE_SYSTEM = (
    "You are the support agent of a shop's support desk, deciding one refund. Read the order "
    "and decide whether the customer's ticket warrants a refund, and of how many cents (a "
    "parcel that arrived broken or never arrived is refunded in full; a change of mind after "
    "delivery is not). You do not refund: call done with your decision, the amount and your "
    "reasons. The desk refunds on the majority of independent decisions."
)
DECISION = loop.done_tool(
    {
        "decision": {"type": "string", "enum": ["refund", "no_refund"]},
        "amount_cents": {"type": "integer", "minimum": 0},
        "reasons": {"type": "string", "minLength": 1},
    },
    ["decision", "amount_cents", "reasons"],
)


@dataclass(frozen=True)
class Decided:
    """What the vote came to: the winning verdict, and the refund it decides (None: none)."""

    winner: str
    amount_cents: int | None
    reasons: str


def verdict_of(report: dict[str, Any] | None) -> str:
    """A sample's decision as a verdict that compares equal when the decisions agree."""
    if report is None:
        return NO_ANSWER
    if report["decision"] == "refund" and report["amount_cents"] > 0:
        return f"refund {report['amount_cents']} cents"
    return "no refund"


def take(
    session: Session,
    client: ModelClient,
    tools: DeskTools,
    config: FlightConfig,
    budget: Budget,
    task: str,
    votes: int,
) -> Decided:
    """Ask for `votes` independent decisions and journal their majority. ModelError (a model
    that fails outright) is the caller's, as for any run of the agent."""
    reports: list[dict[str, Any] | None] = []
    for sample in range(votes):
        agent = loop.Agent(
            SUPPORT_AGENT,
            client,
            Toolbox([t for t in tools.tools() if t.name == "read_order"]),
            DECIDE_SYSTEM,
            max_turns=config.max_turns,
            retries=config.retries,
            window=config.window,
            done=DECISION,
        )
        on = TASK if sample == 0 else f"{TASK}:vote"
        reports.append(loop.run(agent, task, session, budget, task_id=on).report)
    verdicts = [verdict_of(r) for r in reports]
    top, count = Counter(verdicts).most_common(1)[0]
    winner = top if count * 2 > votes and top != NO_ANSWER else NO_MAJORITY
    minority = [
        {"sample": n, "verdict": v, "reasons": (r or {}).get("reasons")}
        for n, (v, r) in enumerate(zip(verdicts, reports, strict=True), start=1)
        if v != winner
    ]
    session.emit(
        session.new(
            VoteTaken,
            agent=SUPPORT_AGENT,
            task_id=TASK,
            samples=votes,
            verdicts=verdicts,
            winner=winner,
            minority=minority,
        )
    )
    chosen = next((r for r, v in zip(reports, verdicts, strict=True) if v == winner), None)
    amount = chosen["amount_cents"] if chosen and winner.startswith("refund") else None
    return Decided(winner, amount, str((chosen or {}).get("reasons", "")))


def refund(session: Session, tools: DeskTools, config: FlightConfig, decided: Decided) -> Outcome:
    """Carry out the majority's refund, once, as a call of the support agent's own tool: the
    ledger keys it like the agent's own refund on T2 (a retry is the same refund), and the
    harness's checks find it where they find every refund."""
    assert decided.amount_cents is not None
    agent = loop.Agent(
        SUPPORT_AGENT,
        ModelClient(),  # nobody is asked: the call is the vote's
        Toolbox([t for t in tools.tools() if t.name == "issue_refund"]),
        DECIDE_SYSTEM,
        retries=config.retries,
    )
    call = ToolCall(
        id="vote-refund",
        name="issue_refund",
        args={
            "amount_cents": decided.amount_cents,
            "reason": f"decided by vote ({decided.winner}): {decided.reasons}"[:1000],
        },
    )
    return loop.dispatch(agent, call, session, {"agent": SUPPORT_AGENT, "task_id": TASK})


def told(decided: Decided, votes: int, outcome: Outcome | None) -> str:
    """What the support agent is told of the vote before it does its part."""
    if outcome is None:
        return f"The refund was decided by a vote of {votes}: no refund. Do not refund."
    if outcome.failed:
        return (
            f"The refund was decided by a vote of {votes} ({decided.winner}), and the desk's "
            f"refund failed: {outcome.error}. Do not refund again yourself."
        )
    return (
        f"The refund was decided by a vote of {votes} ({decided.winner}), and the desk has "
        "refunded it. Do not refund again."
    )
