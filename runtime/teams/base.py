"""What every team shares: its settings, its scenarios, and the verdict it reaches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator

from runtime import workspace
from runtime.events import TeamFinished, TeamStarted
from runtime.journal import Journal
from runtime.model import ModelClient, ModelResponse
from runtime.openai_client import OLD_BACKEND_NAMES
from runtime.sandbox import Sandbox
from runtime.session import Session
from runtime.teams.desk_services import Desk, OrderStatus

# scripted: the scenario's scripts; endpoint: any OpenAI-compatible server (MINUTES_MODEL_*);
# local: the managed local model server. Older journals name the endpoint differently.
Backend = Annotated[
    Literal["scripted", "endpoint", "local"],
    BeforeValidator(lambda value: OLD_BACKEND_NAMES.get(value, value)),
]
Verdict = Literal["done", "failed", "halted", "inconclusive", "out_of_turns", "escalated"]


class DeskSettings(BaseModel):
    """The support desk's world for one run: which order, how slow the payment provider is,
    and who outranks whom when agents disagree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    order_id: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$",
        description="the order the ticket is about (default: a fresh order for this run)",
    )
    amount_cents: int = Field(default=4999, ge=1, le=100_000_000)
    opening_status: OrderStatus = "paid"
    feed: str = Field(
        default="No warehouse events for this order since it was paid.",
        max_length=2_000,
        description="what the warehouse reports, for the order agent",
    )
    provider_latency: float = Field(default=0.05, ge=0, le=60, description="seconds per refund")
    tool_timeout: float = Field(default=5.0, gt=0, le=120, description="how long a tool waits")
    settle_seconds: float = Field(
        default=30.0, ge=0, le=600, description="how long the harness waits for refunds in flight"
    )
    attempts: int = Field(
        default=2, ge=1, le=10, description="lost compare-and-swaps before a person decides"
    )
    authority: dict[str, dict[str, int]] = Field(
        default_factory=lambda: {"status": {"order-agent": 1, "support-agent": 1}},
        description="per predicate, who outranks whom (higher decides)",
    )


def workspace_name(run_id: str) -> str:
    """The directory a run works in, under the workspaces root: named for the run, always."""
    return f"{run_id}.workspace"


def shipped_templates() -> set[str]:
    """The templates a run may name: the workspace templates, and the worlds the shipped
    scenarios name (the support desk's "orders" is a world, not a repository)."""
    from runtime.teams import TEAMS  # the registry imports this module

    named = {s.template for team in TEAMS.values() for s in team.scenarios.values()}
    return set(workspace.templates()) | named


def place_problems(config: dict[str, Any]) -> list[str]:
    """What is wrong with the places on disk a recorded config names (its workspace and its
    template), for a journal coming in: checked field by field, as FlightConfig checks them."""
    problems = []
    for name, check in (("workspace", workspace.check_name), ("template", _shipped)):
        if name not in config:
            continue
        try:
            if not isinstance(config[name], str):
                raise ValueError("it must be a string")
            check(config[name])
        except ValueError as exc:
            problems.append(f"field 'config.{name}': {exc}")
    return problems


def _shipped(template: str) -> str:
    known = shipped_templates()
    if template not in known:
        raise ValueError(f"unknown template {template!r}; known: {', '.join(sorted(known))}")
    return template


class FlightConfig(BaseModel):
    """Every setting a run needs, recorded in TeamStarted so resume and replay rebuild it.

    Validated with the run's id in the context (`context={"run_id": ...}`), the workspace must
    be the run's own; without it, at least one plain directory name. Either way the template
    must be a shipped one: these two name places on the server's disk.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    team: str
    scenario: str
    task: str
    template: str
    workspace: str = Field(description="the workspace's directory name under the workspace root")
    allowance: int = Field(default=5_000, ge=1)
    max_turns: int = Field(default=12, ge=1, le=200)
    retries: int = Field(default=0, ge=0, le=5)
    window: int = Field(default=8_000, ge=200)
    model: Backend = "scripted"
    models: dict[str, Backend] = Field(
        default_factory=dict, description="per-agent backends that differ from `model`"
    )
    model_name: str | None = None
    bidding: bool = False
    docs: bool = False
    max_rounds: int = Field(default=3, ge=1, le=10)
    max_seconds: float | None = Field(default=None, gt=0, description="wall-clock ceiling")
    max_run_turns: int | None = Field(default=None, ge=1, description="model calls, all agents")
    started_by: str | None = Field(default=None, description="who started the run")
    park: bool = Field(
        default=False,
        description="escalations wait in the dead-letter queue for a person's retry or discard",
    )
    desk: DeskSettings | None = Field(default=None, description="the support desk's settings")
    refund: bool = Field(
        default=False, description="support-triage: after answering, carry out the refund"
    )
    spend_rate: float | None = Field(
        default=None, gt=0, description="fan-out: tokens per second before spending is stopped"
    )
    parallel: int = Field(default=3, ge=1, le=16, description="specialists at once (fan-out)")
    deadline: float = Field(
        default=60.0, gt=0, le=3600, description="seconds a specialist has to report (fan-out)"
    )
    sandbox: bool = Field(
        default=True,
        description="agent code runs in the bubblewrap sandbox (False: the operator opted out "
        "when the run started; the run page says so)",
    )

    @field_validator("workspace")
    @classmethod
    def _own_workspace(cls, value: str, info: ValidationInfo) -> str:
        workspace.check_name(value)
        run_id = (info.context or {}).get("run_id")
        if run_id is not None and value != workspace_name(run_id):
            raise ValueError(
                f"{value!r} is not this run's workspace (it would be {workspace_name(run_id)!r})"
            )
        return value

    @field_validator("template")
    @classmethod
    def _shipped_template(cls, value: str) -> str:
        return _shipped(value)


@dataclass(frozen=True)
class Scenario:
    """A named preset: a template repository, a task, and (for the scripted model) what each
    agent will say. The outcome is never scripted: the harness decides it."""

    name: str
    description: str
    template: str
    task: str
    scripts: dict[str, list[ModelResponse]]
    settings: dict[str, Any] = field(default_factory=dict)
    absent: tuple[str, ...] = ()  # agents whose process is down: mail reaches them, no reply


@dataclass(frozen=True)
class Services:
    """The outside world a flight works on, where it differs by host: the command line uses
    files, the workers the project's database. None: the team's command-line default."""

    desk: Callable[[Journal, Path, DeskSettings], Desk] | None = None
    # support-triage: the tool surface (default: the three MCP servers, started here), and
    # what a specialist's thread calls when it ends (the workers close its database connection)
    mcp: Callable[[], Any] | None = None
    release: Callable[[], None] | None = None
    # support-triage on the workers: send a specialist off to run elsewhere (run id, sub-task
    # id, its hand-off); None runs specialists in threads of the flight's own process
    dispatch: Callable[[str, str, dict[str, Any]], None] | None = None
    # how agent code runs on this host (the workers: MINUTES_SANDBOX; the command line:
    # --no-sandbox); a run started in the sandbox stays in it wherever it resumes
    sandbox: Sandbox = field(default_factory=Sandbox)


Fly = Callable[[Session, FlightConfig, dict[str, ModelClient], Path, Services], TeamFinished]


@dataclass(frozen=True)
class Team:
    """A cast of agents, the scenarios it knows, and the harness that flies it."""

    name: str
    agents: tuple[str, ...]
    scenarios: dict[str, Scenario]
    fly: Fly
    bidding: bool = False  # whether the team knows the contract-net option
    desk: bool = False  # whether the team works on the support desk's orders


def start(session: Session, config: FlightConfig) -> None:
    """Journal TeamStarted with the run's settings, or, resuming or replaying, re-emit the one
    recorded. Settings are compared as settings: a journal written before a setting existed
    records no value for it, and reads as its default, so it still resumes and replays."""
    recorded = session.peek()
    if isinstance(recorded, TeamStarted):
        settings = FlightConfig.model_validate(recorded.config)
        if settings != config:
            raise ValueError(
                f"run {session.run_id}: the journal's settings differ from the run's: "
                f"{settings.model_dump(exclude_defaults=True)} against "
                f"{config.model_dump(exclude_defaults=True)}"
            )
        session.emit(recorded)
        return
    session.emit(
        session.new(
            TeamStarted,
            team=config.team,
            scenario=config.scenario,
            task=config.task,
            config=config.model_dump(mode="json"),
        )
    )
