"""The journal's vocabulary: one frozen pydantic model per event kind, each with a schema version.

Events are facts in the past tense and are never rewritten. When a kind changes shape its class
version goes up and an upcaster turns the older shape into the newer one on read, so a journal
written in June still folds in December. Lines without `v` (the reference runtime's flat
journals) are version 1.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


def new_id() -> str:
    return uuid.uuid4().hex


class Event(BaseModel):
    """One immutable fact in a run's minutes; subclasses name the kind and its payload."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ClassVar[str] = "Event"
    v: ClassVar[int] = 1

    id: str = Field(default_factory=new_id)
    t: float = Field(default_factory=time.time)
    run_id: str = ""
    agent: str | None = None
    turn: int | None = None
    task_id: str | None = None

    def same_as(self, other: Event) -> bool:
        """True when both record the same fact: equal but for the id and the timestamp."""
        return type(self) is type(other) and _fact(self) == _fact(other)


def _fact(event: Event) -> dict[str, Any]:
    data = dict(event.__dict__)
    data.pop("id")
    data.pop("t")
    return data


# --- payload pieces -------------------------------------------------------------------------


class Usage(BaseModel):
    """Tokens one model call cost. `total` is what budgets debit; the split is known only
    when the vendor reports it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    total: int = Field(ge=0)
    prompt: int | None = Field(default=None, ge=0)
    completion: int | None = Field(default=None, ge=0)


class CallData(BaseModel):
    """A tool call as the model asked for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ErrorInfo(BaseModel):
    """A failure as recorded: the exception's type name and its message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    message: str


# --- a team run's frame ---------------------------------------------------------------------


class TeamStarted(Event):
    """A run begins: which team, which scenario, what task, and every setting needed to
    rebuild the same harness on resume or replay."""

    kind: ClassVar[str] = "TeamStarted"
    team: str
    scenario: str
    task: str
    config: dict[str, Any] = Field(default_factory=dict)


class WorkspacePrepared(Event):
    kind: ClassVar[str] = "WorkspacePrepared"
    path: str
    template: str
    commit: str


class SuiteChecked(Event):
    """The harness ran the whole test suite itself (it never takes an agent's word for it)."""

    kind: ClassVar[str] = "SuiteChecked"
    passed: int
    failed: int
    ok: bool
    trace: str = ""


class TeamFinished(Event):
    """The harness's verdict on the run. Agents report; only the harness decides."""

    kind: ClassVar[str] = "TeamFinished"
    status: Literal["done", "failed", "halted", "inconclusive", "out_of_turns", "escalated"]
    reason: str = ""
    summary: dict[str, Any] = Field(default_factory=dict)


# --- the agent loop's ten kinds (names kept from the reference runtime) ----------------------


class RunStarted(Event):
    """One agent's run begins."""

    kind: ClassVar[str] = "RunStarted"
    task: str
    tools: list[str] | None = None
    max_turns: int | None = None


class ModelCalled(Event):
    kind: ClassVar[str] = "ModelCalled"
    messages: int | None = None
    window_chars: int | None = None


class ModelResponded(Event):
    """The model answered. v2 carries the text and tool calls, so a run can be replayed;
    v1 carried only `usage` (an int), and such responses read back with text and calls None."""

    kind: ClassVar[str] = "ModelResponded"
    v: ClassVar[int] = 2
    text: str | None
    tool_calls: list[CallData] | None
    usage: Usage

    @property
    def replayable(self) -> bool:
        return self.text is not None and self.tool_calls is not None


class BudgetDebited(Event):
    kind: ClassVar[str] = "BudgetDebited"
    amount: int = Field(ge=0)


class ToolDispatched(Event):
    kind: ClassVar[str] = "ToolDispatched"
    tool: str
    call_id: str | None = None
    args: dict[str, Any] | None = None


class ToolReturned(Event):
    """A tool came back with a result or an error. v2 records the error as type and message;
    v1 recorded one string such as "RuntimeError: runner exited 137"."""

    kind: ClassVar[str] = "ToolReturned"
    v: ClassVar[int] = 2
    tool: str
    call_id: str | None = None
    attempt: int = 1
    result: Any = None
    error: ErrorInfo | None = None


class MessageSent(Event):
    kind: ClassVar[str] = "MessageSent"
    message_id: str | None = None
    performative: str
    sender: str
    recipient: str
    payload: dict[str, Any] | None = None
    in_reply_to: str | None = None


class MessageDelivered(Event):
    """A message reached an inbox. `duplicate` marks a second delivery, which acts on nothing."""

    kind: ClassVar[str] = "MessageDelivered"
    message_id: str | None = None
    recipient: str
    duplicate: bool = False


class AgentFinished(Event):
    kind: ClassVar[str] = "AgentFinished"
    result: dict[str, Any] | None = None


class BudgetExhausted(Event):
    kind: ClassVar[str] = "BudgetExhausted"
    spent: int | None = None
    allowance: int | None = None


# --- the other ways an agent's run stops -----------------------------------------------------


class AgentNudged(Event):
    """The model answered in plain prose; the loop asked once for a tool call."""

    kind: ClassVar[str] = "AgentNudged"
    text: str


class TurnCapReached(Event):
    kind: ClassVar[str] = "TurnCapReached"
    max_turns: int


class RunInconclusive(Event):
    kind: ClassVar[str] = "RunInconclusive"
    reason: str


class RunInterrupted(Event):
    """An operator's stop, honoured at a turn boundary. Humans are journalled like agents."""

    kind: ClassVar[str] = "RunInterrupted"
    by: str
    reason: str = ""


class RunResumed(Event):
    kind: ClassVar[str] = "RunResumed"
    by: str
    reason: str = ""


# --- the team's coordination -----------------------------------------------------------------


class TeamPlanned(Event):
    """The orchestrator's decomposition, as the harness accepted it (typed, validated)."""

    kind: ClassVar[str] = "TeamPlanned"
    tasks: list[dict[str, Any]]
    amended: list[str] = Field(default_factory=list)  # what the harness had to add, and why


class BudgetAllocated(Event):
    """A ledger opened: the run's allowance, or an agent's share of it."""

    kind: ClassVar[str] = "BudgetAllocated"
    name: str
    allowance: int
    parent: str | None = None
    reserve: int = 0


class ModelFailed(Event):
    """The model could not be asked (the client's own retries ran out) or answered garbage."""

    kind: ClassVar[str] = "ModelFailed"
    error: ErrorInfo


class CandidateCommitted(Event):
    """The harness committed an agent's work on a task branch: what a reviewer will judge."""

    kind: ClassVar[str] = "CandidateCommitted"
    branch: str
    commit: str
    diff: str
    files: list[str]


class Integrated(Event):
    """A candidate was merged, citing the ACCEPT it relied on."""

    kind: ClassVar[str] = "Integrated"
    branch: str
    commit: str
    approval: str  # the ACCEPT's message id
    approved_by: str


class IntegrationRefused(Event):
    kind: ClassVar[str] = "IntegrationRefused"
    branch: str
    reason: str


class DeadlinePassed(Event):
    """An awaited reply did not come in time."""

    kind: ClassVar[str] = "DeadlinePassed"
    awaited: str
    request: str  # the REQUEST's message id
    attempt: int
    reason: str


class TaskEscalated(Event):
    """Work that cannot finish, handed to a human with its reason."""

    kind: ClassVar[str] = "TaskEscalated"
    reason: str
    cause: Literal["no_reply", "reject_cap", "no_bids", "other"] = "other"
    attempts: int = 1
    last_error: str = ""


# --- the review queues: what rules could not decide goes to a person -------------------------


class DeadLettered(Event):
    """Work that cannot finish (retries spent, a deadline passed, a poison step), parked."""

    kind: ClassVar[str] = "DeadLettered"
    letter_id: str
    reason: str
    attempts: int = 1
    last_error: str = ""


class DeadLetterRetried(Event):
    """A person sent dead-lettered work back; it resumes from the journal."""

    kind: ClassVar[str] = "DeadLetterRetried"
    letter_id: str
    by: str
    reason: str = ""


class DeadLetterDiscarded(Event):
    kind: ClassVar[str] = "DeadLetterDiscarded"
    letter_id: str
    by: str
    reason: str


class ConflictParked(Event):
    """Two live claims on one fact that the rules could not reconcile."""

    kind: ClassVar[str] = "ConflictParked"
    conflict_id: str
    subject: str
    predicate: str
    conflict_type: str
    claims: list[dict[str, Any]]


class ConflictResolved(Event):
    """A person's ruling on a parked conflict: one claim's value, or none (`choice` "none")."""

    kind: ClassVar[str] = "ConflictResolved"
    conflict_id: str
    by: str
    reason: str
    choice: str
    value: Any = None


# --- driving a run step by step (the control stream `control-<run>`) ------------------------


class DriverLeased(Event):
    """A worker took the right to drive the run for one step. The stream version of this event
    is the lease's epoch: appends to the run carry it, and a stale epoch cannot write."""

    kind: ClassVar[str] = "DriverLeased"
    holder: str
    expires: float
    at_version: int  # the run stream's version when the step began (attempts are counted by it)


class DriverReleased(Event):
    kind: ClassVar[str] = "DriverReleased"
    holder: str
    outcome: str


class StepFailed(Event):
    """A step raised instead of finishing; counted towards dead-lettering."""

    kind: ClassVar[str] = "StepFailed"
    at_version: int
    error: ErrorInfo


class StopRequested(Event):
    """A person asked the run to stop at its next turn boundary."""

    kind: ClassVar[str] = "StopRequested"
    by: str
    reason: str = ""


class ResumeRequested(Event):
    kind: ClassVar[str] = "ResumeRequested"
    by: str
    reason: str = ""


class CeilingReached(Event):
    """A hard ceiling outside the agents ended the run: tokens, turns or wall-clock seconds."""

    kind: ClassVar[str] = "CeilingReached"
    ceiling: Literal["tokens", "turns", "seconds"]
    limit: float
    value: float


# --- registry and upcasters (explicit lists: reading one line answers "which kinds exist?") --

ALL_KINDS: tuple[type[Event], ...] = (
    TeamStarted,
    WorkspacePrepared,
    SuiteChecked,
    TeamFinished,
    RunStarted,
    ModelCalled,
    ModelResponded,
    BudgetDebited,
    ToolDispatched,
    ToolReturned,
    MessageSent,
    MessageDelivered,
    AgentFinished,
    BudgetExhausted,
    AgentNudged,
    TurnCapReached,
    RunInconclusive,
    RunInterrupted,
    RunResumed,
    TeamPlanned,
    BudgetAllocated,
    ModelFailed,
    CandidateCommitted,
    Integrated,
    IntegrationRefused,
    DeadlinePassed,
    TaskEscalated,
    DeadLettered,
    DeadLetterRetried,
    DeadLetterDiscarded,
    ConflictParked,
    ConflictResolved,
    DriverLeased,
    DriverReleased,
    StepFailed,
    StopRequested,
    ResumeRequested,
    CeilingReached,
)

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def _model_responded_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    usage = data.get("usage", 0)
    return {**data, "usage": {"total": usage}, "text": None, "tool_calls": None}


def _tool_returned_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    error = data.get("error")
    if not isinstance(error, str):
        return data
    name, sep, message = error.partition(": ")
    if not (sep and name.isidentifier()):
        name, message = "Error", error
    return {**data, "error": {"type": name, "message": message}}


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("ModelResponded", 1): _model_responded_v1_v2,
    ("ToolReturned", 1): _tool_returned_v1_v2,
}


class EventFormatError(ValueError):
    """A stored event that cannot be read; the message says what is wrong with it."""


BY_KIND: dict[str, type[Event]] = {cls.kind: cls for cls in ALL_KINDS}


def parse_event(data: dict[str, Any]) -> Event:
    """Build an event from its flat form, upcasting older versions. Raises EventFormatError."""
    data = dict(data)
    kind = data.pop("kind", None)
    if not isinstance(kind, str):
        raise EventFormatError("missing field 'kind'")
    cls = BY_KIND.get(kind)
    if cls is None:
        raise EventFormatError(f"unknown kind {kind!r}")
    version = data.pop("v", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise EventFormatError(f"{kind}: field 'v' must be a positive integer, got {version!r}")
    if version > cls.v:
        raise EventFormatError(
            f"{kind} v{version} was written by a newer Minutes (this one reads up to v{cls.v})"
        )
    while version < cls.v:
        data = UPCASTERS[(kind, version)](data)
        version += 1
    if data.get("t") is None:
        # The reference runtime's abridged journals omit timestamps; 0 says "not recorded".
        data["t"] = 0.0
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise EventFormatError(f"{kind}: {describe_validation(exc)}") from None


def describe_validation(exc: ValidationError) -> str:
    """One line per problem, naming the field: "field 'usage.total': Input should be ..."."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(event)"
        if err["type"] == "extra_forbidden":
            parts.append(f"unexpected field {where!r}")
        elif err["type"] == "missing":
            parts.append(f"missing field {where!r}")
        else:
            parts.append(f"field {where!r}: {err['msg']}")
    return "; ".join(parts)


ENVELOPE_FIELDS = frozenset({"id", "t", "run_id", "agent", "turn", "task_id"})


def payload_json(event: Event) -> str:
    """The event's own fields (not the envelope) as compact JSON text, in declaration order."""
    return event.model_dump_json(exclude=ENVELOPE_FIELDS)  # type: ignore[arg-type]


def event_fields(event: Event) -> dict[str, Any]:
    """The event's flat JSON form without envelope placement: kind, v, then its fields."""
    body = event.model_dump(mode="json", exclude_none=False)
    for key in ("agent", "turn", "task_id"):
        if body.get(key) is None:
            body.pop(key, None)
    return {"kind": event.kind, "v": event.v, **body}
