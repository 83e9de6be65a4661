"""What every team shares: its settings, its scenarios, and the verdict it reaches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runtime.events import TeamFinished
from runtime.model import ModelClient, ModelResponse
from runtime.session import Session

Backend = Literal["scripted", "openai"]
Verdict = Literal["done", "failed", "halted", "inconclusive", "out_of_turns", "escalated"]


class FlightConfig(BaseModel):
    """Every setting a run needs, recorded in TeamStarted so resume and replay rebuild it."""

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


Fly = Callable[[Session, FlightConfig, dict[str, ModelClient], Path], TeamFinished]


@dataclass(frozen=True)
class Team:
    """A cast of agents, the scenarios it knows, and the harness that flies it."""

    name: str
    agents: tuple[str, ...]
    scenarios: dict[str, Scenario]
    fly: Fly
    bidding: bool = False  # whether the team knows the contract-net option
