"""The support desk's own settings: its world for one run (which order, how slow the payment
provider is, what the warehouse reports, who outranks whom)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from runtime.team import TeamSettings
from teams.desk.services import OrderStatus

# What an order id is: the page's form, the API's body, start_run's and fly's --order, and
# these settings all hold it to this, and say it in these words.
ORDER_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$"
ORDER_ID_RULE = (
    "an order id is letters, digits, '.', '_' and '-', starting with a letter or digit, at most "
    "40 characters"
)


def order_refusal(text: str) -> str | None:
    """Why `text` is no order id (ORDER_ID_RULE), or None."""
    return None if re.fullmatch(ORDER_ID, text) else ORDER_ID_RULE


class DeskSettings(BaseModel):
    """The support desk's world for one run: which order, how slow the payment provider is,
    and who outranks whom when agents disagree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    order_id: str | None = Field(
        default=None,
        pattern=ORDER_ID,
        description="the order the ticket is about (default: a fresh order for this run)",
    )
    amount_cents: int = Field(default=4999, ge=1, le=100_000_000)
    opening_status: OrderStatus = "paid"
    feed: str = Field(
        default="No warehouse events for this order since it was paid.",
        max_length=2_000,
        description="what the warehouse reports, for the order agent (a simulated feed)",
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


class SupportDeskSettings(TeamSettings):
    """The team's settings: its world (`desk`), and how its refund is decided (`votes`)."""

    team: Literal["support-desk"] = "support-desk"
    desk: DeskSettings = Field(default_factory=DeskSettings)
    rounds: int = Field(
        default=1,
        ge=1,
        le=5,
        description="rounds the agents get while they keep changing the order's status (the "
        "livelock watch stops a status flipping back and forth)",
    )
    votes: Literal[1, 3, 5] = Field(
        default=1,
        description="independent samples of the refund decision, and their majority (the "
        "desk refunds only on it; the samples after the first are billed on T2:vote)",
    )

    @field_validator("desk", mode="before")
    @classmethod
    def _default_world(cls, value: Any) -> Any:
        # Journals from before per-team settings record "no desk settings" as null.
        return {} if value is None else value
