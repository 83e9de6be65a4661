"""The support-triage team's own settings."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import Field

from runtime.coordination.delegation import MAX_DEPTH
from runtime.team import TeamSettings


class TriageSettings(TeamSettings):
    """How many specialists at once, how long each has, what spending trips the breaker,
    whether the refund is carried out after the answer (and the day it is judged on), and
    whether (and how deep) the specialists may hand parts of their sub-tasks on."""

    team: Literal["support-triage"] = "support-triage"
    refund: bool = Field(default=False, description="after answering, carry out the refund")
    received_on: date | None = Field(
        default=None,
        description="the day the ticket came, which the refund's return window is judged on "
        "(none: the day the run started)",
    )
    spend_rate: float | None = Field(
        default=None, gt=0, description="tokens per second before spending is stopped"
    )
    parallel: int = Field(default=3, ge=1, le=16, description="specialists at once")
    deadline: float = Field(
        default=60.0, gt=0, le=3600, description="seconds a specialist has to report"
    )
    delegate: bool = Field(
        default=False, description="specialists may hand a part of their sub-task on"
    )
    delegation_depth: int = Field(
        default=MAX_DEPTH, ge=1, le=8, description="delegations deep a chain may go"
    )
