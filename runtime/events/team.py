"""A team run's frame and coordination: start, workspace, plan, budgets, integration."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from runtime.events.base import ErrorInfo, Event, Usage
from runtime.events.times import Seconds
from runtime.status import Verdict

# --- a team run's frame ---------------------------------------------------------------------


class TeamStarted(Event):
    """A run begins: which team, which scenario, what task, and every setting needed to
    rebuild the same harness on resume or replay (`runtime.team.FlightConfig`, as JSON).

    v2: `config` holds the settings every run has, and the team's own under `settings`
    (`{"team": ..., <the team's keys>}`). v1 kept every team's settings in one flat dict.

    `asked`, in a run begun under an idempotency key (services/keys.py) only: what the start
    asked for, as the request said it (its team, scenario, task, backend, caps... left out
    where it left them to the scenario; a baseline's, the run it is the baseline of). The
    start sent again with the key is compared on these, never on what the server made of
    them (`config`: its sandbox, the scenario's presets), which may have changed since.
    Written only when set, so runs begun without a key record what they did before it.
    """

    kind: ClassVar[str] = "TeamStarted"
    v: ClassVar[int] = 2
    team: str
    scenario: str
    task: str
    config: dict[str, Any] = Field(default_factory=dict)
    asked: dict[str, Any] | None = Field(default=None, exclude_if=lambda value: value is None)


# The settings every run has, as TeamStarted v1 recorded them beside every team's own.
COMMON_V1 = frozenset(
    {
        "scenario",
        "task",
        "workspace",
        "allowance",
        "max_turns",
        "retries",
        "window",
        "model",
        "models",
        "model_name",
        "max_seconds",
        "max_run_turns",
        "started_by",
        "park",
        "sandbox",
    }
)


def team_started_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A flat v1 config, nested: the common settings stay, the team's own move under
    `settings`. Which of the flat keys are the team's own its settings model says
    (`TeamSettings.from_flat`: the keys it has), found among the installed teams; the rest
    were other teams' settings at their defaults, read by nobody, and are dropped."""
    config = data.get("config")
    if not isinstance(config, dict):
        return data
    from runtime import plugins  # the teams' settings models; they import the events

    team = config.get("team", data.get("team"))
    common = {k: v for k, v in config.items() if k in COMMON_V1}
    flat = {k: v for k, v in config.items() if k not in COMMON_V1 and k != "team"}
    settings = {"team": team, **plugins.from_flat(team, flat)}
    return {**data, "config": {**common, "settings": settings}}


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
    """The model could not be asked (the client's own retries ran out) or answered garbage.

    v2: `usage`, what the call cost when the server answered and its answer could not be used
    (cut off, not in the protocol's shape, too large to keep): a vendor bills a reply it wrote,
    usable or not, so the call is billed and debited (a BudgetDebited follows) like an answer.
    None: no answer came, or nothing says a model wrote one; v1 recorded none. v3:
    `usage.estimated` says when its figures are not the vendor's report (Usage); v2 never
    said, and reads as reported."""

    kind: ClassVar[str] = "ModelFailed"
    v: ClassVar[int] = 3
    error: ErrorInfo
    usage: Usage | None = None


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


class ReplyOverdue(Event):
    """An agent asked for a reply used up its deadline without giving one: `turns` of its own
    turns, or `elapsed` seconds between the REQUEST and its latest event, both read from the
    journal. Its run stops here; the harness re-asks once, then escalates (DeadlinePassed)."""

    kind: ClassVar[str] = "ReplyOverdue"
    awaited: str
    request: str  # the REQUEST's message id
    turns: int
    elapsed: Seconds
    max_turns: int | None = None
    max_seconds: Seconds | None = None
    reason: str


class VoteTaken(Event):
    """A critical verdict taken by vote: `samples` independent answers of one agent, their
    majority, and the minority kept as evidence (each with its sample number and reasons)."""

    kind: ClassVar[str] = "VoteTaken"
    samples: int
    verdicts: list[str]
    winner: str
    minority: list[dict[str, Any]] = Field(default_factory=list)


class DraftCritiqued(Event):
    """The reflection step (repo-fix `reflect`): a critic's verdict on the coder's draft before
    review. `pass` sends the draft to review as it is; `revise` sends it back to the coder,
    once, and the reviewer never sees it. `commit` is the draft's."""

    kind: ClassVar[str] = "DraftCritiqued"
    commit: str
    verdict: Literal["pass", "revise"]
    reasons: str
    round: int = 1


class DraftRevised(Event):
    """The coder's one revision after a `revise` critique: the draft it replaces and the
    revision's commit, which goes to review in its place (the draft's own commit when the coder
    changed nothing: then it is not sent for review)."""

    kind: ClassVar[str] = "DraftRevised"
    draft: str
    commit: str
    round: int = 1


class TaskEscalated(Event):
    """Work that cannot finish, handed to a human with its reason."""

    kind: ClassVar[str] = "TaskEscalated"
    reason: str
    cause: Literal["no_reply", "reject_cap", "no_bids", "other"] = "other"
    attempts: int = 1
    last_error: str = ""
