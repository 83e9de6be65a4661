"""Parallel specialists: hand-offs and reports, routed recovery, breakers, sagas, verification.

The contracts themselves (Handoff, Report, the recovery actions) live in `runtime.fanout`; the
events carry them as plain dicts, so this vocabulary does not depend on the package that builds
on it and an old journal still reads after the contracts grow a field. The sub-task an event
belongs to rides in the envelope's `task_id`: a reassigned hand-off changes the worker, not the
sub-task.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from runtime.events.base import Event
from runtime.events.times import Seconds

# --- hand-offs and reports (a run's stream) ----------------------------------------------------


class WorkerHandedOff(Event):
    """A specialist got its brief: the whole of what it may see, as `Handoff` fields."""

    kind: ClassVar[str] = "WorkerHandedOff"
    handoff: dict[str, Any]
    attempt: int = 1


class WorkerReported(Event):
    """A specialist's typed report, as `Report` fields (status, findings, reason code)."""

    kind: ClassVar[str] = "WorkerReported"
    report: dict[str, Any]
    attempt: int = 1


class WorkerTimedOut(Event):
    """A specialist gave no report before its deadline; recovery treats it as a budget failure."""

    kind: ClassVar[str] = "WorkerTimedOut"
    worker_id: str
    deadline_seconds: Seconds
    elapsed: Seconds
    attempt: int = 1


class RecoveryRouted(Event):
    """What the router decided for a failed report: retry, reassign, fallback or escalate.

    `action` holds the action's fields, with `action["action"]` naming which one.
    """

    kind: ClassVar[str] = "RecoveryRouted"
    worker_id: str
    reason: str
    attempt: int
    action: dict[str, Any]


class ToolsListed(Event):
    """What the run's tool servers offered when it started, and which were degraded: a replay
    rebuilds the workers' tool belts from this, with no server running."""

    kind: ClassVar[str] = "ToolsListed"
    tools: list[dict[str, Any]]  # name, description, parameters
    degraded: dict[str, str] = Field(default_factory=dict)  # server -> why


# --- breakers (whichever stream the caller keeps them in) --------------------------------------


class BreakerTripped(Event):
    """A breaker opened: calls are refused until `retry_in` seconds pass (None: until a person
    resets it). `rates` holds the figures it judged on (failure rate, tokens per second...)."""

    kind: ClassVar[str] = "BreakerTripped"
    breaker: str
    reason: str
    rates: dict[str, float] = Field(default_factory=dict)
    retry_in: Seconds | None = None


class BreakerReset(Event):
    """A breaker closed again: its probe succeeded, or a person reset it."""

    kind: ClassVar[str] = "BreakerReset"
    breaker: str
    reason: str
    rates: dict[str, float] = Field(default_factory=dict)


# --- sagas (stream `saga-<id>`) ----------------------------------------------------------------


class SagaStepCompleted(Event):
    """A saga step's action succeeded under effect key `key`; its compensation is now owed if
    the saga is aborted."""

    kind: ClassVar[str] = "SagaStepCompleted"
    saga_id: str
    step: str
    key: str
    result: Any = None


class SagaAborted(Event):
    """The saga will go no further: from here on its completed steps are compensated."""

    kind: ClassVar[str] = "SagaAborted"
    saga_id: str
    reason: str
    failed_step: str | None = None


class SagaCompensating(Event):
    """Undoing a completed step was begun under its own effect key `key`, written before the
    call goes out. Until a SagaCompensated for the step follows, the undo is in flight: its
    driver died mid-call, or the call never got the provider's answer, and whether the money
    moved back is the provider's to say. The next driver sends the undo again under this same
    key (the provider deduplicates on it: one that did act answers its first answer), and the
    audit shows the undo begun and not finished meanwhile. Written once per step, however
    often the undo is sent."""

    kind: ClassVar[str] = "SagaCompensating"
    saga_id: str
    step: str
    key: str


class SagaCompensated(Event):
    """A completed step was undone, under its own effect key `key`."""

    kind: ClassVar[str] = "SagaCompensated"
    saga_id: str
    step: str
    key: str
    result: Any = None


class SagaSettled(Event):
    """How a saga ended, for the run's own stream: the steps done, the steps undone (in the
    order they were undone), and the step that failed with why (None when all went through)."""

    kind: ClassVar[str] = "SagaSettled"
    saga_id: str
    completed: list[str] = Field(default_factory=list)
    compensated: list[str] = Field(default_factory=list)
    failed_step: str | None = None
    error: str | None = None

    @property
    def undone(self) -> bool:
        """The saga's work did not go through: a step failed, and the steps before it (none,
        when the first failed) were undone. The money did not move."""
        return self.failed_step is not None or bool(self.compensated)


class SagaUndoFailed(Event):
    """A saga's undo failed, for the run's own stream: the saga turned back (`failed_step`,
    `reason`) and undoing `step` (under the idempotency key `key`) failed with `error`, so the
    steps in `standing` are done and not undone: money may still be moved. `refused`: the
    provider answered with a refusal, which is its answer for that key (not sent again); else
    the call never got the provider's answer (it was down, unreachable, or did not answer in
    time), and the same key is sent again when the run is retried or resumed (the provider
    deduplicates on it: one that did act answers its first answer). `compensated`: the steps
    undone before it. The run is parked for a person until the undo goes through."""

    kind: ClassVar[str] = "SagaUndoFailed"
    saga_id: str
    step: str
    key: str
    error: str
    refused: bool = False
    standing: list[str] = Field(default_factory=list)
    compensated: list[str] = Field(default_factory=list)
    failed_step: str | None = None
    reason: str = ""

    @property
    def outstanding(self) -> str:
        """What a person must know, in one sentence."""
        how = "the provider refused it" if self.refused else "the provider was not reached"
        done = ", ".join(self.standing) or self.step
        return (
            f"the undo of {self.step} failed ({how}: {self.error}); still done at the "
            f"provider: {done}; money may still be moved"
        )


# --- verification and the answer ---------------------------------------------------------------


class FindingUnsupported(Event):
    """A finding its cited tool call does not back: no such call, a failed call, another tool,
    or key facts (numbers, ids, quoted words) the result does not contain."""

    kind: ClassVar[str] = "FindingUnsupported"
    worker_id: str
    claim: str
    call_id: str
    reason: Literal["unknown_call", "call_failed", "wrong_tool", "facts_missing"]
    missing: list[str] = Field(default_factory=list)
    detail: str = ""


class SubtaskDegraded(Event):
    """The harness found a sub-task without one verified finding, whatever the worker said:
    it failed, refused, missed its deadline, or claimed what its own tool results do not
    back. `why` names the cause; `fallback` the cached answer used instead (None: none)."""

    kind: ClassVar[str] = "SubtaskDegraded"
    worker_id: str
    objective: str
    why: str
    fallback: str | None = None


class AnswerComposed(Event):
    """The answer the run gives. `degraded` says, in words, what it lacks or substituted (None
    when nothing did); `sources` names what it rests on (tool call ids, cached snapshots)."""

    kind: ClassVar[str] = "AnswerComposed"
    text: str
    degraded: str | None = None
    sources: list[str] = Field(default_factory=list)
