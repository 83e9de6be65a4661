"""The repo-fix team's own settings."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from runtime.team import TeamSettings
from teams.repos import Template


class RepoFixSettings(TeamSettings):
    """The repository the team fixes, and how the team is made up and how long it argues."""

    places: ClassVar[tuple[str, ...]] = ("template",)

    team: Literal["repo-fix"] = "repo-fix"
    template: Template
    bidding: bool = Field(default=False, description="contract-net bidding between two coders")
    docs: bool = Field(default=False, description="add the docs agent (writes docs/ only)")
    parallel_writers: bool = Field(
        default=False,
        description="each fix to its own coder (coder-a, coder-b) in its own git worktree, "
        "held as a commitment; merged one after the other through the gate",
    )
    max_rounds: int = Field(default=3, ge=1, le=10, description="REJECT/redo rounds")
    votes: Literal[1, 3, 5] = Field(
        default=1,
        description="independent samples of the reviewer's verdict, and their majority "
        "(the samples after the first are billed on <task>:vote)",
    )
    reflect: bool = Field(
        default=False,
        description="a critic reads each draft before review; a 'revise' gets one revision "
        "(the critique and the revision are billed on <task>:reflect)",
    )
    reply_turns: int | None = Field(
        default=None,
        ge=1,
        le=5_000,
        description="turns an agent asked for a reply may take (None: its turn cap)",
    )
    reply_seconds: float | None = Field(
        default=1800.0,
        gt=0,
        description="seconds an agent asked for a reply may take, by the journal's clock",
    )
