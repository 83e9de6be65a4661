"""A team run's frame and coordination: start, workspace, plan, budgets, integration."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from runtime.events.base import ErrorInfo, Event
from runtime.status import Verdict

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
    status: Verdict
    reason: str = ""
    summary: dict[str, Any] = Field(default_factory=dict)


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
