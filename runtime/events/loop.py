"""The agent loop's kinds: the reference runtime's ten, and the other ways a run stops."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from runtime.events.base import CallData, ErrorInfo, Event, Served, Usage
from runtime.events.times import Seconds

# --- the agent loop's ten kinds (names kept from the reference runtime) ----------------------


class RunStarted(Event):
    """One agent's run begins."""

    kind: ClassVar[str] = "RunStarted"
    task: str
    tools: list[str] | None = None
    max_turns: int | None = None


class ModelCalled(Event):
    """A model call is made: how many entries its window holds, their size, and (v2) their
    digest (runtime/context.window_digest), which lets a replay tell a prompt that changed
    without changing size. v1 recorded no digest: None, and a replay checks such a call by its
    count and size alone."""

    kind: ClassVar[str] = "ModelCalled"
    v: ClassVar[int] = 2
    messages: int | None = None
    window_chars: int | None = None
    window_digest: str | None = Field(default=None, pattern=r"^[0-9a-f]{32}$")

    def same_as(self, other: Event) -> bool:
        if isinstance(other, ModelCalled) and (
            self.window_digest is None or other.window_digest is None
        ):
            # One side was recorded before digests (v1): compare what both say.
            return super().same_as(other.model_copy(update={"window_digest": self.window_digest}))
        return super().same_as(other)


class ModelResponded(Event):
    """The model answered. v2 carries the text and tool calls, so a run can be replayed;
    v1 carried only `usage` (an int), and such responses read back with text and calls None.
    `served` (optional, so older v2 lines load unchanged) says which model and server answered.
    v3: `usage.estimated` says when the figures are not the vendor's report (Usage); v2 and v1
    never said, and read as reported."""

    kind: ClassVar[str] = "ModelResponded"
    v: ClassVar[int] = 3
    text: str | None
    tool_calls: list[CallData] | None
    usage: Usage
    served: Served | None = None

    @property
    def replayable(self) -> bool:
        return self.text is not None and self.tool_calls is not None


class BudgetDebited(Event):
    kind: ClassVar[str] = "BudgetDebited"
    amount: int = Field(ge=0)


class ToolDispatched(Event):
    kind: ClassVar[str] = "ToolDispatched"
    tool: str
    call_id: str | None = None
    args: dict[str, Any] | None = None


class ToolReturned(Event):
    """A tool came back with a result or an error. v2 records the error as type and message;
    v1 recorded one string such as "RuntimeError: runner exited 137"."""

    kind: ClassVar[str] = "ToolReturned"
    v: ClassVar[int] = 2
    tool: str
    call_id: str | None = None
    attempt: int = 1
    result: Any = None
    error: ErrorInfo | None = None


class ToolRetryScheduled(Event):
    """A failed tool call will be tried again after `delay` seconds: exponential backoff with
    jitter, drawn once, live. A replay reads the delay from here instead of drawing anew."""

    kind: ClassVar[str] = "ToolRetryScheduled"
    tool: str
    call_id: str | None = None
    attempt: int  # the attempt about to be made
    delay: Seconds


class MessageSent(Event):
    kind: ClassVar[str] = "MessageSent"
    message_id: str | None = None
    performative: str
    sender: str
    recipient: str
    payload: dict[str, Any] | None = None
    in_reply_to: str | None = None


class MessageDelivered(Event):
    """A message reached an inbox. `duplicate` marks a second delivery, which acts on nothing."""

    kind: ClassVar[str] = "MessageDelivered"
    message_id: str | None = None
    recipient: str
    duplicate: bool = False


class AgentFinished(Event):
    kind: ClassVar[str] = "AgentFinished"
    result: dict[str, Any] | None = None


class BudgetExhausted(Event):
    """An agent's run halted at a turn boundary: a ledger's allowance was spent.

    v2: `ledger` names the ledger whose allowance was spent (the run's pot, "run" as a rule,
    when it was, else the agent's own share), `spent` and `allowance` are that ledger's, and
    `held` is what of its allowance it held back from this agent (the reserve kept for
    verification, for an agent that may not use it): the limit was `allowance - held`. v1
    named none, and its figures were always the halted agent's own ledger's, whichever was
    spent: a run's pot spent by one agent was told as the next one's share, barely touched."""

    kind: ClassVar[str] = "BudgetExhausted"
    v: ClassVar[int] = 2
    spent: int | None = None
    allowance: int | None = None
    ledger: str | None = None
    held: int = 0

    def said(self) -> str:
        """Which allowance was spent, and how far, as a reason or a finding says it."""
        if self.spent is None or self.allowance is None:
            return ""
        if self.ledger is None or self.ledger == self.agent:
            whose = "its"
        else:
            whose = "the run's" if self.ledger == "run" else f"{self.ledger}'s"
        less = f" less {self.held:,} kept for verification" if self.held else ""
        return f"{whose} allowance {self.allowance:,} tokens{less}, spent {self.spent:,}"


# --- the other ways an agent's run stops -----------------------------------------------------


class AgentNudged(Event):
    """The loop's word to the agent: asked once for a tool call after a reply in plain prose,
    or told that the calls of its reply past loop.MAX_CALLS were not run."""

    kind: ClassVar[str] = "AgentNudged"
    text: str


class TurnCapReached(Event):
    kind: ClassVar[str] = "TurnCapReached"
    max_turns: int


class RunInconclusive(Event):
    kind: ClassVar[str] = "RunInconclusive"
    reason: str


class RunInterrupted(Event):
    """An operator's stop, honoured at a turn boundary. Humans are journalled like agents."""

    kind: ClassVar[str] = "RunInterrupted"
    by: str
    reason: str = ""


class RunResumed(Event):
    kind: ClassVar[str] = "RunResumed"
    by: str
    reason: str = ""
