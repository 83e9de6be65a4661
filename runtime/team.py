"""What a team is to the runtime: the contract a team plugin fills in, and the run's settings.

A team (a package under `teams/`, or any installed distribution's, found by
`runtime.plugins`) gives the runtime a `Team`: its agents, its scenarios, its own settings
model and the harness that flies it. The runtime gives the harness a `FlightConfig` (the
settings every run has, plus the team's own under `settings`), model clients, a workspace root
and the host's `Services`. Nothing here names a team.

`FlightConfig.settings` is a union discriminated by `team`: each member is a team's
`TeamSettings` subclass with `team: Literal["<its name>"]`, and its members are the installed
teams' (`runtime.plugins.parse_settings` picks the model by the tag).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializeAsAny,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from runtime import workspace
from runtime.events import MAX_INT, TeamFinished, TeamStarted
from runtime.fanout.restarts import Outages
from runtime.journal import Journal
from runtime.model import ModelClient, Step
from runtime.openai_client import OLD_BACKEND_NAMES
from runtime.sandbox import Sandbox
from runtime.session import Session

# scripted: the scenario's scripts; endpoint: any OpenAI-compatible server (MINUTES_MODEL_*);
# local: the managed local model server; zi and rules: no intelligence at all (runtime/zero.py),
# to measure what the harness guarantees alone. Older journals name the endpoint differently.
Backend = Annotated[
    Literal["scripted", "endpoint", "local", "zi", "rules"],
    BeforeValidator(lambda value: OLD_BACKEND_NAMES.get(value, value)),
]
# A model's name as an endpoint knows it ("small-model", "org/model-8b:free"): printable, no spaces.
# A team's name: what the read models keep (64 characters) and a URL carries as typed. The
# metrics filter chooses runs with no team as "(none)", which no team's name can be.
TEAM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
TEAM_NAME_RULE = "1 to 64 letters, digits, '_', '.' or '-', the first a letter or a digit"
ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[!-~]+$")]
S = TypeVar("S", bound="TeamSettings")
MAX_SECONDS = 366 * 86_400  # a wall-clock ceiling of more than a year is no ceiling
T = TypeVar("T")


def workspace_name(run_id: str) -> str:
    """The directory a run works in, under the workspaces root: named for the run, always."""
    return f"{run_id}.workspace"


class TeamSettings(BaseModel):
    """A team's own settings. A subclass narrows `team` to its name (a Literal): that is how a
    recorded config says whose settings these are."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Settings that name places on the server's disk (a template): they come from the
    # scenario, never from a caller, and a journal coming in is checked for them.
    places: ClassVar[tuple[str, ...]] = ()

    team: str

    @classmethod
    def of(cls: type[S], config: FlightConfig) -> S:
        """The run's settings as this team's model (its harness's typed view of them)."""
        if not isinstance(config.settings, cls):
            raise TypeError(f"run settings for {config.team!r} are not {cls.__name__}")
        return config.settings

    @classmethod
    def from_flat(cls, flat: dict[str, Any]) -> dict[str, Any]:
        """This team's settings out of a config from before settings were per team
        (TeamStarted v1 kept every team's in one flat dict): the keys this model has."""
        return {k: v for k, v in flat.items() if k in cls.model_fields and k != "team"}


class FlightConfig(BaseModel):
    """Every setting a run needs, recorded in TeamStarted so resume and replay rebuild it.

    Validated with the run's id in the context (`context={"run_id": ...}`), the workspace must
    be the run's own; without it, at least one plain directory name. The team's settings are
    validated by the team's own model, found through the installed teams.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenario: str
    task: str
    workspace: str = Field(description="the workspace's directory name under the workspace root")
    allowance: int = Field(default=5_000, ge=1, le=MAX_INT)
    max_turns: int = Field(default=12, ge=1, le=5_000)
    retries: int = Field(default=0, ge=0, le=5)
    window: int = Field(default=8_000, ge=200, le=10_000_000)
    model: Backend = "scripted"
    models: dict[str, Backend] = Field(
        default_factory=dict, description="per-agent backends that differ from `model`"
    )
    model_name: str | None = None
    model_names: dict[str, ModelName] = Field(
        default_factory=dict,
        max_length=32,
        description="per-agent model names on the endpoint, where they differ from the host's "
        "MINUTES_MODEL (a fork's `--model-for coder=endpoint:NAME`)",
    )
    max_seconds: float | None = Field(
        default=None, gt=0, le=MAX_SECONDS, allow_inf_nan=False, description="wall-clock ceiling"
    )
    max_run_turns: int | None = Field(
        default=None, ge=1, le=1_000_000, description="model calls, all agents"
    )
    started_by: str | None = Field(default=None, description="who started the run")
    park: bool = Field(
        default=False,
        description="escalations wait in the dead-letter queue for a person's retry or discard",
    )
    sandbox: bool = Field(
        default=True,
        description="agent code runs in the bubblewrap sandbox (False: the operator opted out "
        "when the run started; the run page says so)",
    )
    baseline_of: str | None = Field(
        default=None,
        description="the team run this run is the single-agent baseline of (runtime/baseline.py)",
    )
    settings: SerializeAsAny[TeamSettings] = Field(description="the team's own settings")

    @property
    def team(self) -> str:
        return self.settings.team

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

    @model_validator(mode="after")
    def _names_on_the_endpoint(self) -> FlightConfig:
        for agent in self.model_names:
            backend = self.models.get(agent, self.model)
            if backend != "endpoint":
                raise ValueError(
                    f"model_names: {agent} runs on {backend!r}; a model name is for the endpoint"
                )
        return self

    @field_validator("settings", mode="before")
    @classmethod
    def _team_settings(cls, value: Any, info: ValidationInfo) -> Any:
        from runtime import plugins  # the installed teams' models (they import this module)

        if isinstance(value, TeamSettings):
            return value
        return plugins.parse_settings(value, info.context)


COMMON = frozenset(FlightConfig.model_fields) - {"settings"}


def split_models(given: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Per-agent choices as people write them (`coder=endpoint:small-model`, `coder=zi`): the
    agents' backends, and the endpoint model names some of them asked for. FlightConfig
    validates both (a name is only for the endpoint)."""
    backends, names = {}, {}
    for agent, choice in given.items():
        backend, sep, name = str(choice).partition(":")
        backends[agent] = backend
        if sep:
            names[agent] = name
    return backends, names


@dataclass(frozen=True)
class Scenario:
    """A named preset: a task, settings, and (for the scripted model) what each agent will
    say. The outcome is never scripted: the harness decides it."""

    name: str
    description: str
    task: str
    scripts: Mapping[str, Sequence[Step]]  # an IfFailed step reacts to a failed tool call
    settings: dict[str, Any] = field(default_factory=dict)  # common ones and the team's own
    absent: tuple[str, ...] = ()  # agents whose process is down: mail reaches them, no reply


@dataclass(frozen=True)
class Option:
    """A team setting the command line offers as a flag (`python -m runtime fly`).

    `into` sets one key inside a dict setting (`--order X` is `desk={"order_id": X}`);
    `refusal` is what a team without the setting is said to lack when given it; `check`, for
    a text, says why a value is none the setting takes (refused naming the flag, where the
    settings' check named a field, 'settings.desk.order_id', in pydantic's words).
    """

    flag: str
    setting: str
    help: str
    kind: Literal["switch", "int", "text"] = "text"
    into: str | None = None
    refusal: str = ""
    check: Callable[[str], str | None] | None = None

    def value(self, given: Any) -> Any:
        return {self.into: given} if self.into else given


@dataclass(frozen=True)
class Services:
    """The outside world a flight works on, where it differs by host: the command line uses
    files, the workers the project's database.

    `provided` holds team-specific services, each an object of a type its team declares
    (`teams.desk.services.DeskServices`, say); a team asks for its own with `of`, and gets the
    command line's defaults where the host provides none.
    """

    # how agent code runs on this host (the workers: MINUTES_SANDBOX; the command line:
    # --no-sandbox); a run started in the sandbox stays in it wherever it resumes
    sandbox: Sandbox = field(default_factory=Sandbox)
    # what a thread that worked for the run calls when it ends (the workers close its database
    # connection); None: nothing to give back
    release: Callable[[], None] | None = None
    # send a fan-out specialist off to run elsewhere (run id, sub-task id, its hand-off);
    # None runs specialists in threads of the flight's own process
    dispatch: Callable[[str, str, dict[str, Any]], None] | None = None
    provided: tuple[object, ...] = ()
    # Where the "endpoint" and "local" backends are, as the host read them: MINUTES_MODEL_*
    # names to values (runtime.openai_client says which). The command line passes its
    # environment, the workers Django's settings; the runtime itself reads none.
    models: Mapping[str, str] = field(default_factory=dict)
    # how long a dispatched specialist's model endpoint being down is waited out, and how far
    # apart it is started again (the workers: MINUTES_OUTAGE_SECONDS and a failed step's
    # longest wait); the default waits nothing out, and a specialist run in a thread here has
    # no restarts at all
    outages: Outages = field(default_factory=Outages)

    def of(self, kind: type[T]) -> T:
        """The provided service of this type, or the type's defaults (`kind()`)."""
        for service in self.provided:
            if isinstance(service, kind):
                return service
        return kind()


Fly = Callable[[Session, FlightConfig, dict[str, ModelClient], Path, Services], TeamFinished]
Vet = Callable[[Scenario, FlightConfig], None]
# A fork's settings from its parent's (runtime/fork.py): what ties a run to its world by its id
# (the desk's order is named for the run when none is given) must name the parent's world.
Pin = Callable[["TeamSettings", str], "TeamSettings"]
# Why the run (its id, its settings) cannot go on live from this journal on this host and its
# workspace root, whatever is asked of it; None when it can. What a run works on may not be
# where its journal is (a desk run exported from a store holds its writes to the order, not
# the order's opening): a fork is asked this before a line of it is written (runtime/fork.py),
# where the flight found out only when it went live, and left a fork nothing could drive.
Ready = Callable[[Journal, str, "FlightConfig", Path, Services], "str | None"]


@dataclass(frozen=True)
class Team:
    """A cast of agents, the scenarios it knows (the first is its default), its settings model,
    and the harness that flies it. `vet` may refuse a planned run (ValueError, saying why) for
    reasons only the team knows; `options` are its command-line flags."""

    name: str
    agents: tuple[str, ...]
    scenarios: dict[str, Scenario]
    fly: Fly
    settings: type[TeamSettings]
    options: tuple[Option, ...] = ()
    vet: Vet | None = None
    # What its agents do, for the views (runtime/roles.py): "writes" or "reviews", by name.
    roles: Mapping[str, Literal["writes", "reviews"]] = field(default_factory=dict)
    pin: Pin | None = None
    ready: Ready | None = None
    # One agent on a repository template: the team flown as other teams' single-agent baseline
    # (runtime/baseline.py), its first agent on their task.
    single_agent: bool = False

    def __post_init__(self) -> None:
        if not TEAM_NAME.fullmatch(self.name):
            raise ValueError(f"team name {self.name!r}: {TEAM_NAME_RULE}")
        if not self.scenarios:
            raise ValueError(f"team {self.name!r} has no scenario")
        declared = self.settings.model_fields["team"].annotation
        if declared != Literal[self.name]:  # type: ignore[comparison-overlap]
            raise ValueError(
                f"team {self.name!r}: {self.settings.__name__}.team must be "
                f'Literal["{self.name}"], the union\'s discriminator'
            )

    @property
    def default_scenario(self) -> str:
        return next(iter(self.scenarios))


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


def place_problems(config: dict[str, Any]) -> list[str]:
    """What is wrong with the places on disk a recorded config names (its workspace, and the
    settings its team marks as places), for a journal coming in: each naming its field."""
    problems = []
    if "workspace" in config:
        try:
            if not isinstance(config["workspace"], str):
                raise ValueError("it must be a string")
            workspace.check_name(config["workspace"])
        except ValueError as exc:
            problems.append(f"field 'config.workspace': {exc}")
    settings = config.get("settings")
    if isinstance(settings, dict):
        from runtime import plugins

        problems += [
            f"field 'config.settings.{name}': {why}"
            for name, why in plugins.place_problems(settings)
        ]
    return problems
