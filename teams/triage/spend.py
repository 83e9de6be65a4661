"""The run's spending, behind a breaker: a rate (when the run sets one) and a cap."""

from __future__ import annotations

from typing import Any

from runtime import errors
from runtime.fanout.breakers import BreakerOpen, SpendBreaker
from runtime.model import ModelClient, ModelError, ModelResponse
from runtime.team import FlightConfig
from teams.triage.belt import Belt
from teams.triage.settings import TriageSettings

SPEND_WINDOW = 10.0  # seconds over which the spend rate is judged


@errors.replayable
class SpendRefused(ModelError):
    """The run's spend breaker is open: no more model calls for now."""


class Metered(ModelClient):
    """A specialist's model, behind the run's spend breaker: a call is refused while the
    breaker is open, and every answer's tokens count toward the run's rate and cap."""

    def __init__(self, client: ModelClient, breaker: SpendBreaker) -> None:
        self.client = client
        self.breaker = breaker

    def complete(self, messages: Any, tools: Any) -> ModelResponse:
        try:
            self.breaker.allow()
        except BreakerOpen as exc:
            raise SpendRefused(str(exc)) from None
        response = self.client.complete(messages, tools)
        self.breaker.record(response.usage.total)
        return response


def spend_breaker(config: FlightConfig, run_id: str, belt: Belt, spent: int = 0) -> SpendBreaker:
    """The run's spend breaker: a rate (when the run sets one) and the allowance as a cap.
    `spent` seeds it with what the run spent before (a specialist on another worker)."""
    breaker = SpendBreaker(
        run_id,
        max_rate=TriageSettings.of(config).spend_rate,
        window_seconds=SPEND_WINDOW,
        cap=config.allowance,
        on_event=belt.events.append,
    )
    breaker.spent = spent
    return breaker
