"""What the API gives of a run's minutes: its bill, threads, audit trail, resume point, its
comparison with its single-agent baseline, its coordination metrics and its findings. The
rest of the API's bodies are in `schemas`.
"""

# No `from __future__ import annotations` here: django-ninja reads the annotations at runtime
# to build its models, and a Literal left as a string makes them unusable.

from typing import Any, Literal

from ninja import Field, Schema

ESTIMATED = (
    "of the calls, those whose usage Minutes estimated, not the vendor's figures (it reported "
    "none, a figure no count of the call can be, or one past what a call counts for): their "
    "tokens are counted, and not priced as fact"
)


class BillRowOut(Schema):
    tokens: int
    calls: int
    share: float = Field(description="of the run's tokens, 0 to 1")
    prompt: int | None = Field(None, description="input tokens; None: some call gave only a total")
    completion: int | None = Field(None, description="output tokens")
    estimated: int = Field(0, description=ESTIMATED)


class PartOut(Schema):
    copied: bool = Field(description="made by the parent, before the fork point")
    model: str | None
    tokens: int
    calls: int
    prompt: int | None = None
    completion: int | None = None
    estimated: int = Field(0, description=ESTIMATED)


class BillAgentOut(BillRowOut):
    model: str | None = Field(None, description="the model the agent asked (None: not known)")
    parts: list[PartOut] | None = Field(
        None,
        description="a fork's: the agent's calls split by the models they were asked of (its "
        "copied prefix on its parent's), each priced at its own; None for a run that is no fork",
    )


class BillLineOut(Schema):
    agent: str
    task_id: str
    tokens: int
    calls: int
    prompt: int | None = None
    completion: int | None = None
    estimated: int = Field(0, description=ESTIMATED)
    parts: list[PartOut] | None = Field(
        None, description="split by the models the calls were asked of, as the agents' are"
    )


class LedgerOut(Schema):
    allowance: int
    parent: str | None
    reserve: int
    spent: int
    remaining: int


class TotalOut(Schema):
    tokens: int
    calls: int
    prompt: int | None = None
    completion: int | None = None
    estimated: int = Field(0, description=ESTIMATED)


GUESS = (
    "where the cost is not known because some calls' usage was estimated: what it comes to "
    "with those figures priced as if the vendor's (a guess, for the order of magnitude); "
    "None otherwise"
)


class AgentCostOut(Schema):
    cost: float | None = Field(description="None: not known (the reason says why)")
    why: str
    estimate: float | None = Field(None, description=GUESS)


class MoneyOut(Schema):
    currency: str
    agents: dict[str, AgentCostOut]
    tasks: dict[str, float | None]
    total: float | None = Field(description="None when any agent's cost is not known")
    estimate: float | None = Field(None, description=GUESS)
    per_verified_success: float | None = Field(
        description="the run's cost when the harness verified its outcome (done); else None"
    )


class InheritedAgentOut(Schema):
    tokens: int
    calls: int
    prompt: int | None = None
    completion: int | None = None
    estimated: int = Field(0, description=ESTIMATED)
    model: str | None = None
    parts: list[PartOut] | None = Field(
        None, description="split by the models the calls were asked of, as the agents' are"
    )


class InheritedOut(Schema):
    agents: dict[str, InheritedAgentOut]
    tokens: int = Field(description="of the bill's tokens, those its parent spent")
    own: int = Field(description="the tokens the fork spent after its fork point")


class BillOut(Schema):
    agents: dict[str, BillAgentOut]
    tasks: dict[str, BillRowOut]
    lines: list[BillLineOut]
    ledgers: dict[str, LedgerOut] = Field(description="the budget's ledgers, by name")
    total: TotalOut
    allowance: int | None
    spent: int = Field(description="what the budget ledger debited (the usage when none)")
    remaining: int | None
    balanced: bool = Field(description="whether the ledger and the usage agree")
    money: MoneyOut = Field(description="the bill in the price table (MINUTES_PRICES)")
    inherited: InheritedOut | None = Field(
        default=None,
        description="a fork's: the tokens its journal copied from its parent's up to the fork "
        "point (spent by the parent, counted once across runs); None for a run that is no fork",
    )


class MessageOut(Schema):
    position: int
    message_id: str | None
    task_id: str
    performative: str
    sender: str
    recipient: str
    payload: Any = Field(description="what the sender sent: any JSON value")
    in_reply_to: str | None
    delivered: bool


# The run's messages by task thread, each thread in order.
ThreadsOut = dict[str, list[MessageOut]]


class EffectOut(Schema):
    """A money step (a refund, say): its amount, who decided it, and the provider's ledger."""

    key: str = Field(description="the effect's idempotency key (the provider's record key)")
    target: str
    outcome: Literal["in flight", "succeeded", "failed"]
    amount_cents: int | None = None
    tool: str | None = Field(None, description="the tool call that decided it")
    call: str | None = None
    started: int = Field(description="the position of its EffectStarted")
    settled: int | None = Field(None, description="the position of its outcome")
    resumed: int | None = Field(
        None, description="the position of its last EffectResumed: taken over and sent again"
    )
    reconciled: bool | None = Field(None, description="settled by asking the provider")
    ledger: dict[str, str] | None = Field(None, description="the provider's ids for it")
    error: str | None = None
    intent: str | None = None


class AuditDetailOut(Schema):
    """What the entry rests on; which fields are present depends on what was done."""

    to: str | None = Field(None, description="ACCEPT/REJECT: to whom")
    evidence: Any = Field(None, description="ACCEPT/REJECT: the payload; a suite check's counts")
    branch: str | None = None
    commit: str | None = None
    approval: str | None = Field(None, description="an integration: the ACCEPT's message id")
    approved_by: str | None = None
    approval_position: int | None = None
    why: str | None = None
    when: float | None = Field(None, description="a person's decision: when")
    choice: str | None = Field(None, description="a conflict's ruling: the claim chosen")
    value: Any = Field(None, description="a conflict's ruling: the value chosen")
    conflict: str | None = None
    attempts: int | None = Field(None, description="a dead letter: steps tried")
    last_error: str | None = None
    saga: str | None = Field(None, description="a saga's step, its abort or its reversal: which")
    step: str | None = Field(None, description="the saga step done, undone, or that failed")
    key: str | None = Field(None, description="the step's (or its reversal's) effect key")
    result: Any = Field(None, description="what the step or its reversal returned")
    amount_cents: int | None = Field(None, description="a money step's amount")
    ledger: dict[str, str] | None = Field(None, description="a saga step's ledger ids")
    effect: EffectOut | None = Field(None, description="an effect the run performed")
    breaker: str | None = Field(None, description="a breaker that tripped")
    rates: dict[str, float] | None = Field(None, description="the figures the breaker judged on")
    actor: str | None = Field(None, description="a refused mutation: whose it was")
    capability: str | None = Field(None, description="a refused mutation: what it would do")
    said: Any = Field(None, description="an untrusted status: what the agent said")
    status: str | None = Field(None, description="an untrusted status: what was recorded")


class AuditEntryOut(Schema):
    position: int
    what: str
    who: str
    task_id: str | None
    human: bool
    detail: AuditDetailOut


class WaitingOut(Schema):
    what: Literal["conflict", "dead letter"]
    id: str = Field(description="the conflict's or the dead letter's id in its review queue")


class ResumePointOut(Schema):
    stage: Literal["plan", "fix", "review", "verify", "finishing", "complete", "waiting"] = Field(
        description="what comes next; waiting: a person's decision (waiting_for says on what); "
        "finishing: the run's end, without the work a person discarded"
    )
    waiting_for: list[WaitingOut] = Field(
        default_factory=list, description="the undecided items the run waits on, oldest first"
    )
    position: int = Field(description="the run resumes after this position")
    version: int = Field(description="the run stream's version at that position")


class SideOut(Schema):
    """One run of a comparison: its outcome and what it cost (runtime/baseline.py)."""

    run_id: str
    team: str | None
    scenario: str | None
    outcome: str = Field(description="the harness's verdict, or running / interrupted")
    tokens: int = Field(description="the bill's total tokens")
    model_calls: int = Field(description="the bill's total calls")
    wall_seconds: float | None = Field(description="started to finished; null until finished")
    verified_successes: int = Field(description="1 when the verdict is done, else 0")
    cost_per_verified_success: float | None = Field(description="tokens per verified success")
    cost_reason: str | None = Field(description="why there is no cost per verified success")


class RatiosOut(Schema):
    tokens: float | None
    model_calls: float | None
    wall_seconds: float | None
    cost_per_verified_success: float | None


class ComparisonOut(Schema):
    """A team run beside its single-agent baseline."""

    team: SideOut
    baseline: SideOut
    team_over_baseline: RatiosOut = Field(description="the team's figure over the baseline's")


class MetricDetailOut(Schema):
    """What a metric was computed from; each metric sets its own fields (docs/metrics.md)."""

    unit: str | None = Field(None, description="seconds or tokens, where not a rate or count")
    shared_files: int | None = None
    files_written: int | None = None
    coordination_tokens: int | None = None
    work_tokens: int | None = None
    coordinating_agents: list[str] | None = None
    coordination_seconds: float | None = None
    work_seconds: float | None = None
    seconds_ratio: float | None = None
    inherited_coordination_tokens: int | None = Field(
        None, description="a fork's: of its coordination tokens, those its parent spent"
    )
    inherited_work_tokens: int | None = Field(
        None, description="a fork's: of its work tokens, those its parent spent"
    )
    contested: int | None = None
    claims: int | None = None
    stale: int | None = None
    deliveries: int | None = None
    resolved: int | None = None
    open: int | None = None
    longest: float | None = None
    waiting_for_people_seconds: float | None = None
    dead_letters: int | None = None
    open_dead_letters: int | None = Field(None, description="of those, still undecided")
    livelocked: int | None = None
    looked_at: int | None = Field(
        None, description="livelock_rate's whole: tasks reviewed, and every one that livelocked"
    )
    reviewed_tasks: int | None = None
    independent: int | None = None
    verifications: int | None = None
    failed: int | None = None
    handoffs: int | None = None
    verified_successes: int | None = None
    deadlocks: int | None = None
    waits: int | None = Field(None, description="requests sent and leases awaited")
    orphaned: int | None = None
    counted: str | None = Field(
        None, description="what the orphan rate counts: commitments, or requests taken up"
    )
    total: int | None = None


class MetricOut(Schema):
    """One coordination metric (docs/metrics.md): its value, or null and why not."""

    value: float | None = Field(description="null when the journal lacks what defines it")
    reason: str | None = Field(description="why the value is null; null when it was measured")
    detail: MetricDetailOut


class FindingDetailOut(Schema):
    task_id: str | None = None
    agents: list[str] | None = None
    artefact: str | None = Field(None, description="duplicate work: the file written twice")
    tool: str | None = Field(
        None, description="an absorbed error: the tool that failed; a loop: the tool repeated"
    )
    breaker: str | None = Field(None, description="a breaker that tripped")
    saga: str | None = Field(None, description="a saga that was turned back")
    undone: list[str] | None = Field(None, description="a saga's steps undone, in that order")
    undoing: list[str] | None = Field(
        None, description="a saga's steps whose undo was begun and not finished: money may move"
    )
    actor: str | None = Field(None, description="a refused mutation: whose it was")
    capability: str | None = Field(None, description="a refused mutation: what it would do")
    check: str | None = Field(None, description="a refused mutation: the gate's check that failed")
    agent: str | None = Field(None, description="an untrusted status: whose")
    said: Any = Field(None, description="an untrusted status: what the agent said")
    status: str | None = Field(None, description="an untrusted status: what was recorded")
    prevented: bool | None = Field(
        None, description="duplicate work the work registry refused before it started"
    )
    commitment: str | None = Field(None, description="an orphaned commitment's id")
    refused: str | None = Field(None, description="a deadlock: the agent whose wait was refused")
    signal: str | None = Field(None, description="a livelock: reopened, oscillating or conflict")
    about: str | None = Field(None, description="a livelock: the task, fact or conflict")
    since: float | None = Field(None, description="a stall: when nobody drove the run any more")
    until: float | None = Field(None, description="a stall: when a step took the run again")
    why: str | None = Field(
        None, description="a stall the reconciler saw: its lease expired, or no step came"
    )


class FindingOut(Schema):
    kind: str
    summary: str
    positions: list[int]
    detail: FindingDetailOut
