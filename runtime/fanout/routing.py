"""Recovery routing for parallel specialists: what to do when one fails, decided on its
report's reason code.

`route` decides between a retry with a bigger budget, a reassignment to another worker or tool
belt, a cached fallback (which makes the answer degraded, and says so), and escalation to a
person (the dead-letter queue). Every branch is capped: a router without caps is a runaway loop
with extra steps. `runtime.fanout.settle` carries the decision out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from runtime.events import RecoveryRouted
from runtime.fanout.contracts import Contract, Handoff, Reason, Report

# --- actions -----------------------------------------------------------------------------------


class Retry(Contract):
    """Run the sub-task again with `handoff`: a bigger budget, or a clarified objective."""

    action: Literal["retry"] = "retry"
    handoff: Handoff
    why: str


class Reassign(Contract):
    """Give the sub-task to another worker (or the same job with another tool belt)."""

    action: Literal["reassign"] = "reassign"
    to: str
    handoff: Handoff
    why: str


class Fallback(Contract):
    """Use a cached answer instead of a live one. The answer must say it is degraded."""

    action: Literal["fallback"] = "fallback"
    source: str
    text: str
    degraded: str


class Escalate(Contract):
    """Stop trying: the sub-task goes to a person (the dead-letter queue) with its reason."""

    action: Literal["escalate"] = "escalate"
    code: Reason
    reason: str


# --- what the router knows about a sub-task ----------------------------------------------------


class Tried(Contract):
    """One earlier attempt of a sub-task: who ran it and why it failed."""

    worker_id: str
    reason: Reason


class Attempt(Contract):
    """The attempt a report answers: its hand-off, and the failures before it.

    The history is what makes the caps work (budget retries, clarifications, workers already
    tried) without the router keeping state of its own; on a Celery worker it is folded back
    from the run's `RecoveryRouted` events.
    """

    handoff: Handoff
    history: tuple[Tried, ...] = ()

    @property
    def number(self) -> int:
        return len(self.history) + 1

    def count(self, reason: Reason) -> int:
        return sum(1 for t in self.history if t.reason == reason)

    def workers(self) -> list[str]:
        """Workers that have had this sub-task, the current one first, then most recent first."""
        seen = [self.handoff.worker_id]
        for tried in reversed(self.history):
            if tried.worker_id not in seen:
                seen.append(tried.worker_id)
        return seen

    def follow(self, report: Report, action: Retry | Reassign) -> Attempt:
        """The attempt `action` starts after `report` failed this one."""
        if report.reason is None:
            raise ValueError("an ok report starts no further attempt")
        return Attempt(
            handoff=action.handoff,
            history=(*self.history, Tried(worker_id=report.worker_id, reason=report.reason)),
        )


class Alternate(Contract):
    """Who takes over a sub-task when a worker's tools fail it."""

    worker_id: str
    allowed_tools: list[str] = Field(min_length=1)


class Cached(Contract):
    """A stored answer for a worker's sub-task, and where it came from (shown to the reader)."""

    source: str
    text: str


def clarify(handoff: Handoff) -> str:
    """The default clarification: narrow the objective to its literal reading.

    A supervisor with a model can pass a better one (`RecoveryPolicy.clarify`); this one is
    deterministic, so a replayed run clarifies the same way.
    """
    return (
        f"{handoff.objective} Answer exactly this and nothing broader, from the inputs given; "
        "where two readings remain, take the narrower one and name it in 'degraded'."
    )


@dataclass(frozen=True)
class RecoveryPolicy:
    """The router's caps and options. Budgets grow by `budget_factor` per retry, up to the caps."""

    budget_retries: int = 2
    budget_factor: float = 2.0
    max_steps: int = 32
    max_tokens: int = 200_000
    max_deadline_seconds: float = 900.0
    clarifications: int = 1
    max_attempts: int = 4  # across all reasons: mixed failures must not loop forever either
    alternatives: Mapping[str, Alternate] = field(default_factory=dict)  # by failing worker id
    fallbacks: Mapping[str, Cached] = field(default_factory=dict)  # by worker id
    clarify: Callable[[Handoff], str] = clarify

    def __post_init__(self) -> None:
        if self.budget_factor <= 1:
            raise ValueError("budget_factor must be above 1: a retry needs a bigger budget")
        if min(self.budget_retries, self.clarifications) < 0 or self.max_attempts < 1:
            raise ValueError("retry counts must be >= 0 and max_attempts >= 1")


# --- the router --------------------------------------------------------------------------------


def route(
    report: Report, attempt: Attempt, policy: RecoveryPolicy
) -> Retry | Reassign | Fallback | Escalate:
    """Decide what to do about a failed report, on its reason code and the attempt's history."""
    if report.ok or report.reason is None:
        raise ValueError(f"{report.worker_id} reported ok: there is nothing to recover")
    if report.worker_id != attempt.handoff.worker_id:
        raise ValueError(
            f"report from {report.worker_id!r} does not answer the attempt given to "
            f"{attempt.handoff.worker_id!r}"
        )
    action = _ROUTES[report.reason](attempt, policy)
    if isinstance(action, Escalate) and report.reason == "breaker" and report.degraded:
        # Which breaker and why: the harness wrote it into the report it made for the worker.
        action = action.model_copy(
            update={"reason": f"{report.degraded}; no cache to fall back on"}
        )
    # The cap bounds attempts, so it stops only actions that start one; a fallback is terminal.
    if isinstance(action, Retry | Reassign) and not _may_try_again(attempt, policy):
        return Escalate(
            code=report.reason,
            reason=f"{attempt.number} attempts made, the cap is {policy.max_attempts}",
        )
    return action


def _may_try_again(attempt: Attempt, policy: RecoveryPolicy) -> bool:
    return attempt.number < policy.max_attempts


def _on_budget(attempt: Attempt, policy: RecoveryPolicy) -> Retry | Escalate:
    spent = attempt.count("budget")
    if spent >= policy.budget_retries:
        return Escalate(code="budget", reason=f"out of budget after {spent} bigger budgets")
    handoff = attempt.handoff
    bigger = grow(handoff, policy)
    # More time alone is no bigger budget: the steps or the tokens must grow.
    if (bigger.max_steps, bigger.max_tokens) == (handoff.max_steps, handoff.max_tokens):
        return Escalate(code="budget", reason="out of budget at the policy's caps")
    return Retry(
        handoff=bigger,
        why=f"budget: {handoff.max_steps}->{bigger.max_steps} steps, "
        f"{handoff.max_tokens}->{bigger.max_tokens} tokens",
    )


def grow(handoff: Handoff, policy: RecoveryPolicy) -> Handoff:
    """The hand-off with steps, tokens and deadline multiplied by the factor, each capped.

    The deadline grows too: twice the steps in the same time would only turn a budget failure
    into a timeout.
    """
    factor = policy.budget_factor
    return handoff.revised(
        max_steps=math.ceil(_grown(handoff.max_steps, factor, policy.max_steps)),
        max_tokens=math.ceil(_grown(handoff.max_tokens, factor, policy.max_tokens)),
        deadline_seconds=_grown(handoff.deadline_seconds, factor, policy.max_deadline_seconds),
    )


def _grown(value: float, factor: float, cap: float) -> float:
    """`value * factor`, up to the cap, and never below where it was (a hand-off may already
    exceed a cap the policy sets later)."""
    return max(value, min(cap, value * factor))


def _on_tool_error(attempt: Attempt, policy: RecoveryPolicy) -> Reassign | Fallback | Escalate:
    handoff = attempt.handoff
    tried = attempt.workers()
    alternate = policy.alternatives.get(handoff.worker_id)
    # An alternate already tried would bounce the sub-task between two broken workers; with
    # no attempt left, the cache below is still better than escalating.
    fresh = alternate is not None and alternate.worker_id not in tried
    if alternate is not None and fresh and _may_try_again(attempt, policy):
        return Reassign(
            to=alternate.worker_id,
            handoff=handoff.revised(
                worker_id=alternate.worker_id, allowed_tools=alternate.allowed_tools
            ),
            why=f"tool error in {handoff.worker_id}'s tools",
        )
    for worker_id in tried:
        cached = policy.fallbacks.get(worker_id)
        if cached is not None:
            return Fallback(
                source=cached.source,
                text=cached.text,
                degraded=f"{handoff.worker_id} failed (tool error); "
                f"answered from the cached {cached.source}",
            )
    return Escalate(code="tool_error", reason="tool error, with no alternate and no cache")


def _on_ambiguous(attempt: Attempt, policy: RecoveryPolicy) -> Retry | Escalate:
    asked = attempt.count("ambiguous")
    if asked >= policy.clarifications:
        return Escalate(code="ambiguous", reason=f"still ambiguous after {asked} clarification(s)")
    handoff = attempt.handoff
    return Retry(
        handoff=handoff.revised(objective=policy.clarify(handoff)), why="clarified objective"
    )


def _on_refused(attempt: Attempt, policy: RecoveryPolicy) -> Escalate:
    # A refusal is a judgement, not a fault: retrying it elsewhere is shopping for a yes.
    return Escalate(code="refused", reason=f"{attempt.handoff.worker_id} refused the task")


def _on_breaker(attempt: Attempt, policy: RecoveryPolicy) -> Fallback | Escalate:
    # A breaker stopped the worker, not its judgement. Running it again would only meet the
    # open breaker: collateral work answers from its cache where it has one; the rest goes to
    # a person, saying which breaker it was.
    for worker_id in attempt.workers():
        cached = policy.fallbacks.get(worker_id)
        if cached is not None:
            return Fallback(
                source=cached.source,
                text=cached.text,
                degraded=f"answered from the cached {cached.source}",
            )
    return Escalate(code="breaker", reason="a breaker stopped it; no cache to fall back on")


_ROUTES: dict[
    Reason, Callable[[Attempt, RecoveryPolicy], Retry | Reassign | Fallback | Escalate]
] = {
    "budget": _on_budget,
    "tool_error": _on_tool_error,
    "ambiguous": _on_ambiguous,
    "refused": _on_refused,
    "breaker": _on_breaker,
}


def timeout_report(handoff: Handoff, steps: int = 0, tokens: int = 0) -> Report:
    """The report a worker that missed its deadline did not write: time is a budget too."""
    return Report(
        worker_id=handoff.worker_id, status="failed", reason="budget", steps=steps, tokens=tokens
    )


def routed_event(
    report: Report, attempt: Attempt, action: Retry | Reassign | Fallback | Escalate, run_id: str
) -> RecoveryRouted:
    """The event recording a routing decision."""
    return RecoveryRouted(
        run_id=run_id,
        agent=report.worker_id,
        worker_id=report.worker_id,
        reason=report.reason or "",
        attempt=attempt.number,
        action=action.model_dump(mode="json"),
    )
