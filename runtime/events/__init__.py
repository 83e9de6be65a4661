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
    LiveClaimsNoted,
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
    SagaCompensating,
    SagaSettled,
    SagaStepCompleted,
    SagaUndoFailed,
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
from runtime.events.versions import HAD, UPCASTERS, Upcaster

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
    LiveClaimsNoted,
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
    SagaCompensating,
    SagaCompensated,
    SagaSettled,
    SagaUndoFailed,
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
    "LiveClaimsNoted",
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
    "SagaCompensating",
    "SagaSettled",
    "SagaStepCompleted",
    "SagaUndoFailed",
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
