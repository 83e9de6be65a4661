"""The journal's vocabulary: one frozen pydantic model per event kind, each with a schema version.

Events are facts in the past tense and are never rewritten. When a kind changes shape its class
version goes up and an upcaster turns the older shape into the newer one on read, so a journal
written in June still folds in December. Lines without `v` (the reference runtime's flat
journals) are version 1.

May import pydantic and the standard library only; the one exception is TeamStarted's v1
upcaster, which asks the installed teams (`runtime.plugins`, imported when it runs) which of a
flat config's settings are a team's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from runtime.events.base import (
    ENVELOPE_FIELDS,
    LINE_BYTES,
    LINE_DEPTH,
    MAX_INT,
    VALUE_DEPTH,
    CallData,
    ErrorInfo,
    Event,
    EventFormatError,
    Served,
    Usage,
    depth_problem,
    describe_validation,
    event_fields,
    integer_problem,
    nests_deeper_than,
    new_id,
    payload_json,
    shown,
)
from runtime.events.coordination import (
    ClaimAsserted,
    ClaimsReconciled,
    DeskChecked,
    EffectFailed,
    EffectReserved,
    EffectResumed,
    EffectStarted,
    EffectSucceeded,
    FactChanged,
    FactReconciled,
    IntentDeclared,
    LeaseClosed,
    LeaseGranted,
    LeaseReleased,
    LeaseRenewed,
    OrderPrepared,
    StaleWorkRejected,
)
from runtime.events.driving import (
    CeilingReached,
    DriverLeased,
    DriverReleased,
    JournalImported,
    ResumeRequested,
    RunStalled,
    StepFailed,
    StopRequested,
)
from runtime.events.fanout import (
    AnswerComposed,
    BreakerReset,
    BreakerTripped,
    FindingUnsupported,
    RecoveryRouted,
    SagaAborted,
    SagaCompensated,
    SagaSettled,
    SagaStepCompleted,
    SubtaskDegraded,
    ToolsListed,
    WorkerHandedOff,
    WorkerReported,
    WorkerTimedOut,
)
from runtime.events.lineage import MessageInjected, RunForked, RunTagged
from runtime.events.loop import (
    AgentFinished,
    AgentNudged,
    BudgetDebited,
    BudgetExhausted,
    MessageDelivered,
    MessageSent,
    ModelCalled,
    ModelResponded,
    RunInconclusive,
    RunInterrupted,
    RunResumed,
    RunStarted,
    ToolDispatched,
    ToolRetryScheduled,
    ToolReturned,
    TurnCapReached,
)
from runtime.events.mutation import (
    IntentCarried,
    MutationRefused,
    StatusNormalised,
    StatusReported,
    WorktreeAdded,
    WorktreeRemoved,
)
from runtime.events.obligations import (
    CommitmentAcknowledged,
    CommitmentMade,
    CommitmentReleased,
    CommitmentTransferred,
    DeadlockDetected,
    DelegationRefused,
    DuplicateWorkRefused,
    LeaseAwaited,
    LeaseGivenBack,
    LeaseTaken,
    LivelockDetected,
    WorkDelegated,
)
from runtime.events.review import (
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
)
from runtime.events.team import (
    BudgetAllocated,
    CandidateCommitted,
    DeadlinePassed,
    DraftCritiqued,
    DraftRevised,
    Integrated,
    IntegrationRefused,
    ModelFailed,
    ReplyOverdue,
    SuiteChecked,
    TaskEscalated,
    TeamFinished,
    TeamPlanned,
    TeamStarted,
    VoteTaken,
    WorkspacePrepared,
    team_started_v1_v2,
)
from runtime.events.times import LATEST_T, Instant, Seconds, float_problem
from runtime.events.traces import (
    TraceBatchPushed,
    TracePushed,
    TracePushFailed,
    TracePushQueued,
    TraceSpansClaimed,
    TraceSpansPushed,
    TraceSpansPushFailed,
)

# --- registry and upcasters (explicit lists: reading one line answers "which kinds exist?") --

ALL_KINDS: tuple[type[Event], ...] = (
    TeamStarted,
    RunForked,
    MessageInjected,
    RunTagged,
    VoteTaken,
    DraftCritiqued,
    DraftRevised,
    WorkspacePrepared,
    SuiteChecked,
    TeamFinished,
    RunStarted,
    ModelCalled,
    ModelResponded,
    BudgetDebited,
    ToolDispatched,
    ToolReturned,
    ToolRetryScheduled,
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
    ReplyOverdue,
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
    JournalImported,
    ClaimAsserted,
    ClaimsReconciled,
    EffectFailed,
    EffectReserved,
    EffectResumed,
    EffectStarted,
    EffectSucceeded,
    FactChanged,
    IntentDeclared,
    LeaseGranted,
    LeaseRenewed,
    LeaseReleased,
    LeaseClosed,
    StaleWorkRejected,
    FactReconciled,
    OrderPrepared,
    DeskChecked,
    ToolsListed,
    WorkerHandedOff,
    WorkerReported,
    WorkerTimedOut,
    RecoveryRouted,
    BreakerTripped,
    BreakerReset,
    SagaStepCompleted,
    SagaAborted,
    SagaCompensated,
    SagaSettled,
    FindingUnsupported,
    SubtaskDegraded,
    AnswerComposed,
    TracePushQueued,
    TracePushed,
    TracePushFailed,
    TraceSpansClaimed,
    TraceSpansPushed,
    TraceSpansPushFailed,
    TraceBatchPushed,
    MutationRefused,
    StatusReported,
    StatusNormalised,
    WorktreeAdded,
    WorktreeRemoved,
    IntentCarried,
    CommitmentMade,
    CommitmentAcknowledged,
    CommitmentReleased,
    CommitmentTransferred,
    DuplicateWorkRefused,
    LeaseAwaited,
    DeadlockDetected,
    WorkDelegated,
    DelegationRefused,
    LivelockDetected,
    RunStalled,
    LeaseTaken,
    LeaseGivenBack,
)

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def _model_responded_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    usage = data.get("usage", 0)
    if type(usage) is not int:
        # Said of the line's own field: wrapped, a v2 usage in a v1 line was refused as
        # 'usage.total', a field no v1 line has.
        raise EventFormatError(
            "ModelResponded v1: field 'usage': a v1 usage is its total, a whole number of "
            f"tokens, got {shown(usage)}"
        )
    return {**data, "usage": {"total": usage}, "text": None, "tool_calls": None}


def _tool_returned_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    error = data.get("error")
    if not isinstance(error, str):
        return data
    name, sep, message = error.partition(": ")
    if not (sep and name.isidentifier()):
        name, message = "Error", error
    return {**data, "error": {"type": name, "message": message}}


def _lease_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 kept no count of the work's attempts (nor, released, which grant): the defaults say
    # "not recorded", and the lease reader counts such a stream the old way, once. (A count
    # the line carries all the same is dropped before: HAD.)
    return data


def _released_v2_v3(data: dict[str, Any]) -> dict[str, Any]:
    # v2 kept no Retry-After: its default, None, says the endpoint asked nothing.
    return data


def _effect_started_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 kept no fence of its performer: the defaults, None, say it was not recorded (one the
    # line carries all the same is dropped before: HAD).
    return data


def _effect_started_v2_v3(data: dict[str, Any]) -> dict[str, Any]:
    # v2 named no tool call: the default, None. The call that started such an effect, run
    # again after its worker died, cannot be told from another call under the same key, so it
    # is judged at the gate again, as it was when the line was written: where nothing moved it
    # passes and takes the effect over; where the intent moved since, it is refused, and the
    # effect is left to the reconciler (who asks the provider what became of its key).
    return data


def _called_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 named no tool call: the default, None, says it was not recorded.
    return data


def _failed_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 recorded no usage for a failed call (an unusable reply that was paid for went
    # unbilled): the default, None, says none was recorded, and nothing is debited on replay.
    return data


def _usage_unmarked(data: dict[str, Any]) -> dict[str, Any]:
    # No version before the mark said whether a usage was estimated (ModelResponded v2,
    # ModelFailed v2): its figures read as reported, whatever a line written by hand claims.
    usage = data.get("usage")
    if isinstance(usage, dict) and "estimated" in usage:
        return {**data, "usage": {k: v for k, v in usage.items() if k != "estimated"}}
    return data


def _model_called_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 hashed no window: the default, None, says so, and replay checks its count and size.
    return data


def _exhausted_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 named no ledger: the default, None, says its figures are the halted agent's own.
    return data


def _spans_pushed_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 kept no running total: the default, None, has its reader sum the outcomes.
    return data


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("ModelResponded", 1): _model_responded_v1_v2,
    ("ModelResponded", 2): _usage_unmarked,
    ("ToolReturned", 1): _tool_returned_v1_v2,
    ("TeamStarted", 1): team_started_v1_v2,
    ("LeaseGranted", 1): _lease_v1_v2,
    ("LeaseReleased", 1): _lease_v1_v2,
    ("LeaseReleased", 2): _released_v2_v3,
    ("EffectStarted", 1): _effect_started_v1_v2,
    ("EffectStarted", 2): _effect_started_v2_v3,
    ("FactChanged", 1): _called_v1_v2,
    ("ClaimAsserted", 1): _called_v1_v2,
    ("MutationRefused", 1): _called_v1_v2,
    ("ModelFailed", 1): _failed_v1_v2,
    ("ModelFailed", 2): _usage_unmarked,
    ("BudgetExhausted", 1): _exhausted_v1_v2,
    ("ModelCalled", 1): _model_called_v1_v2,
    ("TraceSpansPushed", 1): _spans_pushed_v1_v2,
}


# The fields each older version had, besides the envelope: what an upcaster may take from a
# line of that version. A field the current class has that the line's version did not is
# dropped before the upcast: a v1 EffectStarted carrying `lease` and `epoch` (a fence v1 never
# recorded, written into a file by hand) read as a v2 fenced by them, and the effect
# reconciler left the effect to that "performer". A field no version has is left for the
# class to refuse, as on any line. (ModelResponded and ToolReturned v1 are the reference
# runtime's lines. ModelResponded's `served` and TeamStarted's `asked` joined v2 later, without
# a version of their own: no v1 had them either.)
_STARTED_V1 = frozenset(
    {"key", "effect_type", "target", "request_hash", "intent_id", "intent_version"}
)
HAD: dict[tuple[str, int], frozenset[str]] = {
    ("ModelResponded", 1): frozenset({"usage"}),
    ("ModelResponded", 2): frozenset({"text", "tool_calls", "usage", "served"}),
    ("ToolReturned", 1): frozenset({"tool", "result", "error"}),
    ("TeamStarted", 1): frozenset({"team", "scenario", "task", "config"}),
    ("LeaseGranted", 1): frozenset({"resource", "holder", "expires"}),
    ("LeaseReleased", 1): frozenset({"resource", "holder"}),
    ("LeaseReleased", 2): frozenset(
        {"resource", "holder", "epoch", "outcome", "at_version", "attempt"}
    ),
    ("EffectStarted", 1): _STARTED_V1,
    ("EffectStarted", 2): _STARTED_V1 | {"lease", "epoch"},
    ("FactChanged", 1): frozenset(
        {"subject", "predicate", "value", "based_on", "by", "intent_version"}
    ),
    ("ClaimAsserted", 1): frozenset(
        {
            "claim_id",
            "subject",
            "predicate",
            "value",
            "based_on",
            "source",
            "by",
            "evidence",
            "supersedes",
        }
    ),
    ("MutationRefused", 1): frozenset(
        {"what", "actor", "capability", "check", "key", "held", "current", "reason"}
    ),
    ("ModelFailed", 1): frozenset({"error"}),
    ("ModelFailed", 2): frozenset({"error", "usage"}),
    ("BudgetExhausted", 1): frozenset({"spent", "allowance"}),
    ("ModelCalled", 1): frozenset({"messages", "window_chars"}),
    ("TraceSpansPushed", 1): frozenset({"endpoint", "first", "count", "bytes", "attempts"}),
}


BY_KIND: dict[str, type[Event]] = {cls.kind: cls for cls in ALL_KINDS}


def _as_written(cls: type[Event], version: int, data: dict[str, Any]) -> dict[str, Any]:
    """The line's fields that its version had (see HAD), and any the class does not know."""
    had = HAD.get((cls.kind, version))
    if had is None:  # (an upcaster without its entry: tests/runtime/test_events.py says so)
        return data
    newer = cls.model_fields.keys() - ENVELOPE_FIELDS - had
    return {k: v for k, v in data.items() if k not in newer}


def parse_event(data: dict[str, Any]) -> Event:
    """Build an event from its flat form, upcasting older versions. Raises EventFormatError."""
    data = dict(data)
    if "kind" not in data:
        raise EventFormatError("missing field 'kind'")
    kind = data.pop("kind")
    if not isinstance(kind, str):
        got = repr(kind)[:40]  # a hostile file may put anything here: say a little of it
        raise EventFormatError(f"field 'kind' must be the event's kind as a string, got {got}")
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
    if version < cls.v:
        data = _as_written(cls, version, data)
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


__all__ = [
    "ALL_KINDS",
    "BY_KIND",
    "ENVELOPE_FIELDS",
    "HAD",
    "LATEST_T",
    "LINE_BYTES",
    "LINE_DEPTH",
    "MAX_INT",
    "UPCASTERS",
    "VALUE_DEPTH",
    "AgentFinished",
    "AgentNudged",
    "AnswerComposed",
    "BreakerReset",
    "BreakerTripped",
    "BudgetAllocated",
    "BudgetDebited",
    "BudgetExhausted",
    "CallData",
    "CandidateCommitted",
    "CeilingReached",
    "ClaimAsserted",
    "ClaimsReconciled",
    "CommitmentAcknowledged",
    "CommitmentMade",
    "CommitmentReleased",
    "CommitmentTransferred",
    "ConflictParked",
    "ConflictResolved",
    "DeadLetterDiscarded",
    "DeadLetterRetried",
    "DeadLettered",
    "DeadlinePassed",
    "DeadlockDetected",
    "DelegationRefused",
    "DeskChecked",
    "DraftCritiqued",
    "DraftRevised",
    "DriverLeased",
    "DriverReleased",
    "DuplicateWorkRefused",
    "EffectFailed",
    "EffectReserved",
    "EffectResumed",
    "EffectStarted",
    "EffectSucceeded",
    "ErrorInfo",
    "Event",
    "EventFormatError",
    "FactChanged",
    "FactReconciled",
    "FindingUnsupported",
    "Instant",
    "Integrated",
    "IntegrationRefused",
    "IntentCarried",
    "IntentDeclared",
    "JournalImported",
    "LeaseAwaited",
    "LeaseClosed",
    "LeaseGivenBack",
    "LeaseGranted",
    "LeaseReleased",
    "LeaseRenewed",
    "LeaseTaken",
    "LivelockDetected",
    "MessageDelivered",
    "MessageInjected",
    "MessageSent",
    "ModelCalled",
    "ModelFailed",
    "ModelResponded",
    "MutationRefused",
    "OrderPrepared",
    "RecoveryRouted",
    "ReplyOverdue",
    "ResumeRequested",
    "RunForked",
    "RunInconclusive",
    "RunInterrupted",
    "RunResumed",
    "RunStalled",
    "RunStarted",
    "RunTagged",
    "SagaAborted",
    "SagaCompensated",
    "SagaSettled",
    "SagaStepCompleted",
    "Seconds",
    "Served",
    "StaleWorkRejected",
    "StatusNormalised",
    "StatusReported",
    "StepFailed",
    "StopRequested",
    "SubtaskDegraded",
    "SuiteChecked",
    "TaskEscalated",
    "TeamFinished",
    "TeamPlanned",
    "TeamStarted",
    "ToolDispatched",
    "ToolRetryScheduled",
    "ToolReturned",
    "ToolsListed",
    "TraceBatchPushed",
    "TracePushFailed",
    "TracePushQueued",
    "TracePushed",
    "TraceSpansClaimed",
    "TraceSpansPushFailed",
    "TraceSpansPushed",
    "TurnCapReached",
    "Upcaster",
    "Usage",
    "VoteTaken",
    "WorkDelegated",
    "WorkerHandedOff",
    "WorkerReported",
    "WorkerTimedOut",
    "WorkspacePrepared",
    "WorktreeAdded",
    "WorktreeRemoved",
    "depth_problem",
    "describe_validation",
    "event_fields",
    "float_problem",
    "integer_problem",
    "nests_deeper_than",
    "new_id",
    "parse_event",
    "payload_json",
    "shown",
]
