"""One specialist: a narrow brief, its tool belt, its model; always a typed report."""

from __future__ import annotations

from runtime import loop, overspent
from runtime.budget import Breach, Share
from runtime.events import BreakerTripped
from runtime.fanout import contracts
from runtime.fanout.contracts import Handoff, Reason, Report
from runtime.fanout.engine import failed
from runtime.model import ModelClient, ModelError
from runtime.session import Session
from teams.triage import onward
from teams.triage.belt import Belt
from teams.triage.plan import BELTS, REPORT, SYSTEM
from teams.triage.spend import SpendRefused

LOOP_REPEATS = 3  # the same call this many times in a row trips the loop breaker


def work(
    sub: Session,
    sub_id: str,
    handoff: Handoff,
    client: ModelClient,
    belt: Belt,
) -> Report:
    """One specialist on its own stream (`sub`), from its brief alone; always a typed report.
    On a stream that already holds its whole run, this reads the report back without acting."""
    # Its own ledger, named after it: a breach is the specialist's, not the run's, and its
    # report, given on the turn that spent its allowance, still reaches the parent, marked.
    budget = Share(handoff.max_tokens, handoff.worker_id)
    agent = loop.Agent(
        handoff.worker_id,
        client,
        contracts.toolbox(handoff, [*belt.tools(), onward.tool(sorted(BELTS))]),
        SYSTEM,
        max_turns=handoff.max_steps,
        done=REPORT,
        repeats=LOOP_REPEATS,
    )
    try:
        result = loop.run(agent, contracts.brief(handoff), sub, budget, task_id=sub_id)
    except ModelError as exc:
        if isinstance(exc, SpendRefused):  # replayed too: the type is registered
            # the breaker refused, not the worker: recovery must not take it for a judgement
            return failed(
                handoff,
                "breaker",
                0,
                budget.spent,
                f"the spend breaker stopped {handoff.worker_id}: {exc}",
            )
        return failed(handoff, "tool_error", 0, budget.spent, f"its model failed: {exc}")
    if result.status == "looping":
        trips = [e for e in sub.emitted if isinstance(e, BreakerTripped)]
        why = trips[-1].reason if trips else "it repeated itself"
        return failed(
            handoff,
            "breaker",
            result.turns,
            budget.spent,
            f"the loop breaker stopped {handoff.worker_id}: {why}",
        )
    if result.status != "done" or result.report is None:
        reason: Reason = "ambiguous" if result.status == "inconclusive" else "budget"
        return failed(handoff, reason, result.turns, budget.spent, f"it stopped: {result.status}")
    raw = {**result.report, "steps": result.turns, "tokens": budget.spent}
    try:
        report = contracts.parse_report(raw, handoff)
    except contracts.ContractError as exc:
        return failed(handoff, "ambiguous", result.turns, budget.spent, f"a broken report: {exc}")
    breach = overspent.over(budget)
    return over_budget(report, breach) if breach is not None else report


def over_budget(report: Report, breach: Breach) -> Report:
    """The report of a specialist whose last turn spent its allowance: the work was done and
    paid for, so it stands, and says it went over, naming the ledger and its figures."""
    said = (
        f"over budget: {breach.ledger}'s allowance {breach.allowance:,} tokens, "
        f"spent {breach.spent:,} on the turn it reported"
    )
    degraded = f"{report.degraded}; {said}" if report.degraded else said
    return report.model_copy(update={"degraded": degraded})
