"""The support-triage team's own settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from runtime.team import TeamSettings


class TriageSettings(TeamSettings):
    """How many specialists at once, how long each has, what spending trips the breaker, and
    whether the refund is carried out after the answer."""

    team: Literal["support-triage"] = "support-triage"
    refund: bool = Field(default=False, description="after answering, carry out the refund")
    spend_rate: float | None = Field(
        default=None, gt=0, description="tokens per second before spending is stopped"
    )
    parallel: int = Field(default=3, ge=1, le=16, description="specialists at once")
    deadline: float = Field(
        default=60.0, gt=0, le=3600, description="seconds a specialist has to report"
    )
