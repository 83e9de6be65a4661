"""What the API takes (`XIn`) and gives (`XOut`): every body typed, so the OpenAPI schema says
exactly which fields an answer holds.

Payloads agents wrote (a message's payload, a claim's value, a reviewer's evidence) are any
JSON value, and typed as such; everything Minutes itself builds has its fields named here.
"""

# No `from __future__ import annotations` here: django-ninja reads the annotations at runtime
# to build its models, and a Literal left as a string makes them unusable.

from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Field, Schema
from pydantic import BaseModel, ConfigDict, StringConstraints

from dashboard import actions, queries
from journal_store.models import RunSummary
from runtime import status
from services import intents


class Error(Schema):
    detail: str


class In(BaseModel):
    """A request body: a JSON object holding only the fields named. An unknown field is a 422
    naming it, never dropped (a misspelt `team` must not start another team's run). A plain
    pydantic model, not ninja's Schema, whose reader takes any value (null, a list, a string)
    for an object with every field at its default."""

    model_config = ConfigDict(extra="forbid")


class Accepted(Schema):
    detail: str


# --- runs ---------------------------------------------------------------------------------------


class RunOut(Schema):
    run_id: str
    team: str
    scenario: str
    task: str
    status: str = Field(
        description="see runtime/status.py: running, interrupted, "
        "dead-lettered, or the harness's verdict"
    )
    stage: str
    started_by: str
    started_at: datetime | None
    finished_at: datetime | None
    tokens: int
    allowance: int | None
    spent: int
    event_count: int
    findings_count: int
    reason: str
    cost: float | None = Field(None, description="in the price table's currency; None: unknown")
    parent_id: str = Field("", description="the run this one was forked from (empty: none)")
    fork_at: int | None = Field(
        None, description="the position of the parent's event it was forked after"
    )
    stalled_since: datetime | None = Field(
        None,
        description="set while a running run has nobody driving it and no step on its way "
        "(its worker died, or no worker is running); it is queued again automatically",
    )

    @staticmethod
    def resolve_stalled_since(run: RunSummary) -> datetime | None:
        if not hasattr(run, "stalled_since"):
            queries.mark_stalled([run])
        return run.stalled_since  # type: ignore[attr-defined,no-any-return]


class StopOut(Schema):
    by: str
    reason: str


class FailingOut(Schema):
    since: datetime = Field(description="when the first of the failed steps failed")
    tries: int = Field(description="steps failed since the run last moved")
    last_error: str = Field(description="the latest failure, as 'Type: message'")
    outage: bool = Field(
        description="every failure was the model endpoint not answering (EndpointDown): "
        "waited out until `until`, then dead-lettered"
    )
    until: datetime | None = Field(
        None, description="how long an outage is waited out (MINUTES_OUTAGE_SECONDS)"
    )


class RunDetailOut(RunOut):
    """One run, as the list gives it, and what only its own page shows."""

    stop_requested: StopOut | None = Field(
        None,
        description="a stop a person asked of the running run that it has not reached yet (it "
        "stops at its next turn boundary; a resume cancels it); None: none pending",
    )
    failing: FailingOut | None = Field(
        None,
        description="the running run's steps that failed since it last moved (tried again "
        "after a backoff); None: its last step went through",
    )

    @staticmethod
    def resolve_failing(run: RunSummary) -> FailingOut | None:
        if run.status != status.RUNNING:
            return None
        found = queries.trouble(run.run_id)
        if found is None:
            return None
        return FailingOut(
            since=found.since,
            tries=found.tries,
            last_error=found.last_error,
            outage=found.outage,
            until=found.until,
        )

    @staticmethod
    def resolve_stop_requested(run: RunSummary) -> StopOut | None:
        if not status.is_active(run.status):
            return None
        stop = queries.pending_stop(run.run_id)
        return None if stop is None else StopOut(by=stop.by, reason=stop.reason)


class RunIn(In):
    team: str = Field("repo-fix", max_length=64)
    scenario: str | None = Field(
        None, max_length=64, description="None: the team's own first scenario"
    )
    task: str | None = Field(
        None,
        max_length=actions.TASK_MAX,
        description="a task of your own (a model backend only: scripted agents say what the "
        "scenario scripts); None: the scenario's own",
    )
    model: Literal["scripted", "endpoint", "local", "openai"] = Field(
        "scripted",
        description="scripted; endpoint: the OpenAI-compatible server at MINUTES_MODEL_BASE_URL "
        "(openai is its old name); local: the local model server, which must be running "
        "(503 when it is not: the API never starts it)",
    )
    allowance: int | None = Field(None, ge=1, le=actions.ALLOWANCE_MAX, strict=True)
    max_turns: int | None = Field(None, ge=1, le=actions.TURNS_MAX, strict=True)
    max_seconds: float | None = Field(None, ge=1, le=actions.SECONDS_MAX)
    order: str | None = Field(
        default=None,
        pattern=actions.ORDER,
        description="support-desk: the order the ticket is about (default: fresh)",
    )
    baseline: bool = Field(
        default=False,
        description="also fly the single-agent baseline (the solo coder on the same task, "
        "template and model), linked to this run; see /api/runs/{id}/comparison",
    )
    reflect: bool = Field(
        default=False,
        description="repo-fix: a critic reads the coder's first draft before review; a "
        "'revise' gets one revision, and the reviewer sees only the revision (billed on "
        "<task>:reflect)",
    )
    votes: Literal[1, 3, 5] | None = Field(
        default=None,
        description="samples of the team's critical decision and their majority: repo-fix's "
        "review (extra samples billed on <task>:vote), support-desk's refund (on T2:vote); "
        "None: the scenario's own",
    )


class EventOut(Schema):
    position: int
    stream: str
    version: int
    kind: str
    v: int = Field(description="the schema version the event is given in (older ones upcast)")
    agent: str | None
    task_id: str | None
    turn: int | None
    t: float
    data: dict[str, Any] = Field(description="the event's own fields, by its kind")


class ReasonIn(In):
    reason: str = Field("", max_length=actions.REASON_MAX)


class ReplayOut(Schema):
    identical: bool
    events: int
    complete: bool
    difference: str


# --- a run's minutes ------------------------------------------------------------------------------


class BillRowOut(Schema):
    tokens: int
    calls: int
    share: float = Field(description="of the run's tokens, 0 to 1")
    prompt: int | None = Field(None, description="input tokens; None: some call gave only a total")
    completion: int | None = Field(None, description="output tokens")


class BillAgentOut(BillRowOut):
    model: str | None = Field(None, description="the model the agent asked (None: not known)")


class BillLineOut(Schema):
    agent: str
    task_id: str
    tokens: int
    calls: int
    prompt: int | None = None
    completion: int | None = None


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


class AgentCostOut(Schema):
    cost: float | None = Field(description="None: not known (the reason says why)")
    why: str


class MoneyOut(Schema):
    currency: str
    agents: dict[str, AgentCostOut]
    tasks: dict[str, float | None]
    total: float | None = Field(description="None when any agent's cost is not known")
    per_verified_success: float | None = Field(
        description="the run's cost when the harness verified its outcome (done); else None"
    )


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


class ResumePointOut(Schema):
    stage: Literal["plan", "fix", "review", "verify", "complete"]
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
    contested: int | None = None
    claims: int | None = None
    stale: int | None = None
    deliveries: int | None = None
    resolved: int | None = None
    open: int | None = None
    longest: float | None = None
    waiting_for_people_seconds: float | None = None
    dead_letters: int | None = None
    livelocked: int | None = None
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


# --- journals -----------------------------------------------------------------------------------


class ImportOut(Schema):
    run_ids: list[str]
    events: int
    added: int
    torn: str | None


class ImportRefusedOut(Schema):
    detail: str
    problems: list[str] = Field(description="the first problems, each naming its line")
    more: int = Field(description="how many more problems there were")


# --- review queues ------------------------------------------------------------------------------

# A decision on a review item says why, as the pages ask: blank or whitespace is refused (422,
# naming the field) before anything is journalled.
Reason = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=actions.REASON_MAX)
]


class DecisionIn(In):
    reason: Reason = Field(description="why: recorded in the audit trail with your name")


class ResolveIn(In):
    choice: str
    reason: Reason = Field(description="why: recorded in the audit trail with your name")
    ruling_id: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="the ruling's id, its idempotency key: the same ruling posted again is "
        "applied once (default: derived from the conflict, the choice and you)",
    )


class LetterOut(Schema):
    letter_id: str
    run_id: str
    task_id: str | None
    reason: str
    attempts: int
    last_error: str
    status: str
    decided_by: str
    decision_reason: str


class ConflictOut(Schema):
    conflict_id: str
    run_id: str
    subject: str
    predicate: str
    conflict_type: str
    claims: list[dict[str, Any]]
    commit: dict[str, Any] | None = Field(
        description="where a chosen value is committed, by compare-and-swap from `version`"
    )
    status: str
    resolution: dict[str, Any] | None
    decided_by: str
    decision_reason: str


# --- intents ------------------------------------------------------------------------------------


class IntentVersionOut(Schema):
    version: int
    statement: str
    by: str
    reason: str
    at: datetime


class IntentOut(Schema):
    intent_id: str
    version: int = Field(description="the current version; work held under an older one is stale")
    statement: str
    history: list[IntentVersionOut]


class SupersedeIn(In):
    statement: str = Field(
        min_length=1, max_length=intents.STATEMENT_MAX, description="what is wanted now"
    )
    reason: str = Field(
        min_length=1,
        max_length=actions.REASON_MAX,
        description="why: the runs it stops will show it",
    )
    version: int | None = Field(
        None, description="the version you read; 409 when it has moved since (omit: any)"
    )


class InjectedIn(In):
    agent: str = Field(max_length=64)
    # Something to read: a message of spaces would fork a run whose agent reads nothing new.
    text: str = Field(min_length=1, max_length=8_000, pattern=r"\S")


class ForkIn(In):
    """A fork of the run after its event at position `at`; each change is optional."""

    at: int = Field(
        ge=1,
        le=queries.POSITION_MAX,
        strict=True,
        description="the position of the event to fork after",
    )
    models: dict[
        str,
        Annotated[
            str,
            StringConstraints(
                max_length=210, pattern=r"^(scripted|endpoint|local|zi|rules)(:[!-~]{1,200})?$"
            ),
        ],
    ] = Field(
        default_factory=dict,
        max_length=32,
        description="another backend for some agents, from the fork on: scripted, endpoint, "
        "local, zi or rules; `endpoint:NAME` asks the endpoint for another model",
    )
    message: InjectedIn | None = Field(None, description="a message for an agent's next turn")
    tool_result: Any = Field(
        None, description="replace the result of the tool call at `at` (a ToolReturned)"
    )
    # The new run's bounds (dashboard/actions.py), as on the fork page.
    max_turns: int | None = Field(None, ge=1, le=actions.TURNS_MAX, strict=True)
    allowance: int | None = Field(None, ge=1, le=actions.ALLOWANCE_MAX, strict=True)


class TagsIn(In):
    add: list[Annotated[str, StringConstraints(max_length=64)]] = Field(
        default_factory=list, max_length=20
    )
    remove: list[Annotated[str, StringConstraints(max_length=64)]] = Field(
        default_factory=list, max_length=20
    )


class TagsOut(Schema):
    tags: list[str]
