"""The solo team's own settings."""

from __future__ import annotations

from typing import ClassVar, Literal

from runtime.team import TeamSettings
from teams.repos import Template


class SoloSettings(TeamSettings):
    """Which shipped template the coder's workspace is made from."""

    places: ClassVar[tuple[str, ...]] = ("template",)

    team: Literal["solo"] = "solo"
    template: Template = "parse-empty"
