"""The run's spending, behind a breaker: a rate (when the run sets one) and a cap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import errors
from runtime.fanout.breakers import BreakerOpen, SpendBreaker
from runtime.model import EndpointDown, ModelClient, ModelError, ModelResponse
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
        try:
            response = self.client.complete(messages, tools)
        except (ModelError, EndpointDown) as exc:
            # an answer that could not be used was paid for too, as was a pick before an outage
            if exc.usage is not None:
                self.breaker.record(exc.usage.total)
            raise
        self.breaker.record(response.usage.total)
        return response

    # The client's place is the wrapped model's: a specialist resumed from its stream (a worker
    # killed mid-work, a fork made while it was at work) had its recorded answers skipped by
    # this wrapper alone, and a scripted model then answered from its script's start again.
    def give_up_at(self, when: float | None) -> None:
        self.client.give_up_at(when)

    def fast_forward(self, calls: int) -> None:
        self.client.fast_forward(calls)

    def fast_forward_over(self, responses: Sequence[ModelResponse]) -> None:
        self.client.fast_forward_over(responses)

    def mark(self) -> dict[str, int] | None:
        return self.client.mark()

    def seek(self, mark: dict[str, int]) -> None:
        self.client.seek(mark)

    def advance_over(self, responses: Sequence[ModelResponse]) -> None:
        self.client.advance_over(responses)


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
