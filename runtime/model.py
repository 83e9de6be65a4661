"""The model boundary: `ModelClient.complete(messages, tools) -> ModelResponse`.

This is the only interface through which the runtime talks to a model. Everything
vendor-specific (request shapes, authentication, rate limits) lives behind it, in one client
module per protocol. Beside the network client sit two that spend no tokens: ScriptedClient
(deterministic scripts for tests and demos) and ReplayClient (the responses a journal recorded).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runtime import errors
from runtime.events import CallData, ErrorInfo, Event, ModelResponded, Served, Usage

ToolCall = CallData
# The one key of a call's `args` when the model sent arguments that are not a JSON object: what
# it sent, and why that is not one. Journalled as the call was asked for, so a replay refuses it
# the same way, and the toolbox refuses it back to the model (tools.Toolbox.check), which can
# then send the call again, where a malformed call used to fail the whole model call. Not a name
# a JSON schema's property would take.
UNREADABLE_ARGS = "(arguments not a JSON object)"
"""A tool call the model asked for: id, name, arguments."""

ToolSpec = dict[str, Any]
"""What the model is shown of a tool: {"name", "description", "parameters": JSON schema}."""


class ChatMessage(BaseModel):
    """One entry of the window sent to the model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None  # on role="tool": which call this answers

    def size(self) -> int:
        """Characters this entry puts in the window (text plus tool-call arguments)."""
        return self._size

    @cached_property
    def _size(self) -> int:
        # Cached: every turn re-measures the whole kept history, and messages never change.
        return len(self.content) + sum(len(c.name) + len(str(c.args)) for c in self.tool_calls)

    @cached_property
    def digest(self) -> bytes:
        """What this entry says, hashed: every field, each behind its length, so that no two
        entries hash alike by moving text between fields. Cached, as its size is: a window's
        digest (runtime/context.window_digest) is made of its entries' each turn."""
        h = hashlib.sha256()
        parts = [self.role, self.content, self.tool_call_id or ""]
        for call in self.tool_calls:
            args = json.dumps(call.args, sort_keys=True, separators=(",", ":"), default=repr)
            parts += [call.id, call.name, args]
        for part in parts:
            raw = part.encode("utf-8", "surrogatepass")
            h.update(len(raw).to_bytes(8, "big"))
            h.update(raw)
        h.update(b"\x01" if self.tool_call_id is not None else b"\x00")
        return h.digest()

    @cached_property
    def data(self) -> dict[str, Any]:
        """The message as JSON data, as a loop snapshot keeps it. Cached: a snapshot every few
        turns dumps the whole kept history, and messages never change (read it, never edit it)."""
        return self.model_dump(mode="json")


class ModelResponse(BaseModel):
    """What a model produced: text, tool calls, or both, and always the usage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Usage(total=0)
    served: Served | None = None  # what the vendor said of the model and server that answered

    def size(self) -> int:
        """Characters of the answer (text plus tool-call names and arguments)."""
        return len(self.text) + sum(len(c.name) + len(str(c.args)) for c in self.tool_calls)


@errors.replayable
class ModelError(Exception):
    """The model could not be asked or its answer could not be understood."""

    # What the call cost when its server answered and the answer could not be used: a vendor
    # bills what it wrote, usable or not, so the agent loop journals it on the ModelFailed and
    # debits it (runtime/loop.py). None: no answer came, or nothing says a model wrote one.
    # Replayed, it is the usage the ModelFailed recorded (runtime/session.py).
    usage: Usage | None = None


class EndpointDown(Exception):
    """The model endpoint gave no usable answer after the client's own retries: a 5xx or 429
    that persisted, timeouts, refused or dropped connections. An outage, not something the run
    did, so deliberately not a ModelError: the agent loop journals nothing for it (the
    ModelCalled before it stays the journal's last word), but for a part of the call that was
    paid for (`usage`); no harness ends the run over it, and it goes up to whoever drives the
    run. On the workers the step fails and is tried again, past MINUTES_MAX_STEP_ATTEMPTS for
    MINUTES_OUTAGE_SECONDS, and the run goes on when the endpoint answers; after that it waits
    in the dead-letter queue, and a person's retry asks again from that ModelCalled
    (services/steps.py). A run's ceiling that falls during the retries is not an outage but
    the run's end: ModelHTTPError, journalled."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        attempts: int = 1,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status  # the last HTTP status seen; None: no answer arrived
        self.attempts = attempts
        self.retry_after = retry_after  # what the server last asked us to wait, in seconds

    # What was paid for before the outage: a client that asks twice for one answer
    # (pick_then_force) was answered, and billed, the first time. The loop journals it on a
    # ModelFailed and debits it, and the step's retry reads that back and asks again.
    usage: Usage | None = None

    @classmethod
    def again(cls, error: ErrorInfo, usage: Usage | None) -> None:
        """Raise the outage a ModelFailed recorded, with what it cost, as the loop raised it
        live: the loop writes it again and, being a replay, asks again as the retry did.
        Nothing for a failure of another kind."""
        if error.type == cls.__name__:
            down = cls(error.message)
            down.usage = usage
            raise down


@errors.replayable
class ScriptExhausted(ModelError):
    pass


@errors.replayable
class ReplayExhausted(ModelError):
    pass


class ModelClient:
    """One method; everything vendor-specific lives behind it."""

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelResponse:
        raise NotImplementedError

    def give_up_at(self, when: float | None) -> None:
        """The wall-clock time (as time.time()) the run's ceiling falls at: a client that waits
        (for a slow server, or between retries) does not wait past it. Most answer at once."""

    def fast_forward(self, calls: int) -> None:
        """Skip `calls` answers already recorded in the journal before going live.

        A resumed run replays its recorded responses and then asks this client for the next
        one. A client with a position of its own (a script) must skip what was already served;
        a network client has nothing to skip.
        """

    def fast_forward_over(self, responses: Sequence[ModelResponse]) -> None:
        """`fast_forward`, told the answers themselves (a script that reacts needs them)."""
        self.fast_forward(len(responses))

    def mark(self) -> dict[str, int] | None:
        """The client's place, for a loop snapshot (runtime/snapshots.py): {} for a client
        with no place of its own; None for one that keeps a place it cannot tell (it overrides
        `fast_forward` but not this), and then no snapshot is taken."""
        own = type(self)
        if own.fast_forward is ModelClient.fast_forward and (
            own.fast_forward_over is ModelClient.fast_forward_over
        ):
            return {}
        return None

    def seek(self, mark: dict[str, int]) -> None:
        """Go back to a place `mark` returned (a resume from a snapshot)."""

    def advance_over(self, responses: Sequence[ModelResponse]) -> None:
        """Skip `responses`, recorded after the place it was put at with `seek`."""


class IfFailed(BaseModel):
    """A script step the scripted agent takes only when its last tool call came back with an
    error, and skips (at no cost) otherwise: a script that reacts to what its tools return."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    then: ModelResponse


Step = ModelResponse | IfFailed
"""One entry of a script: an answer, or an answer given only after a failed tool call."""


def last_call_failed(messages: Sequence[ChatMessage]) -> bool:
    """Whether the tool results since the model's last answer include an error."""
    for message in reversed(messages):
        if message.role == "assistant":
            return False
        if message.role == "tool":
            try:
                observed = json.loads(message.content)
            except ValueError:
                continue
            if isinstance(observed, dict) and observed.get("error"):
                return True
    return False


class ScriptedClient(ModelClient):
    """Serves a fixed list of responses in order: deterministic, and no tokens spent. An
    `IfFailed` step is served only after a failed tool call, and passed over otherwise."""

    def __init__(self, script: Iterable[Step], name: str = "scripted") -> None:
        self.script = list(script)
        self.name = name
        self.position = 0  # the next step of the script
        self.served = 0  # answers given: call ids are numbered by it, whatever was passed over

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelResponse:
        failed = last_call_failed(messages)
        while (
            self.position < len(self.script)
            and isinstance(self.script[self.position], IfFailed)
            and not failed
        ):
            self.position += 1
        if self.position >= len(self.script):
            raise ScriptExhausted(
                f"{self.name}: the script has {len(self.script)} responses and all were used"
            )
        step = self.script[self.position]
        response = step.then if isinstance(step, IfFailed) else step
        self.position += 1
        self.served += 1
        if any(not c.id for c in response.tool_calls):
            # Scripts leave call ids blank; number them by answer so they are the same in
            # every process that serves this script (resume compares them with the journal).
            calls = [
                c if c.id else c.model_copy(update={"id": f"{self.name}-{self.served}-{i}"})
                for i, c in enumerate(response.tool_calls, 1)
            ]
            response = response.model_copy(update={"tool_calls": calls})
        if response.usage.prompt is None and response.usage.completion is None:
            usage = split(response.usage, messages, response)
            response = response.model_copy(update={"usage": usage})
        return response

    def fast_forward(self, calls: int) -> None:
        self.position = self.served = calls

    def fast_forward_over(self, responses: Sequence[ModelResponse]) -> None:
        """Skip the answers already given, telling a reacting step taken from one passed over
        by what was answered."""
        self.position = self.served = 0
        self.advance_over(responses)

    def advance_over(self, responses: Sequence[ModelResponse]) -> None:
        position = self.position
        for given in responses:
            while position < len(self.script):
                step = self.script[position]
                position += 1
                if not isinstance(step, IfFailed) or _same_calls(step.then, given):
                    break
        self.position, self.served = position, self.served + len(responses)

    def mark(self) -> dict[str, int] | None:
        return {"position": self.position, "served": self.served}

    def seek(self, mark: dict[str, int]) -> None:
        self.position, self.served = mark["position"], mark["served"]


def _same_calls(a: ModelResponse, b: ModelResponse) -> bool:
    return [(c.name, c.args) for c in a.tool_calls] == [(c.name, c.args) for c in b.tool_calls]


class ReplayClient(ModelClient):
    """Serves the responses a journal recorded for one agent, in order.

    With `then`, it hands over to that client once the recording runs out (first telling it
    how many answers were already served): this is how a resumed run goes live.
    """

    def __init__(
        self, events: Iterable[Event | None], agent: str, then: ModelClient | None = None
    ) -> None:
        self.agent = agent
        self.recorded = [e for e in events if isinstance(e, ModelResponded) and e.agent == agent]
        self.then = then
        self.served = 0
        self._handed_over = False
        # Set by a resume from a loop snapshot (runtime/snapshots.py): the answers between
        # the loop's start and the snapshot were never read, so at the handover `then` is put
        # back at its place as of the snapshot and skips only the answers served after it.
        self._rebase: tuple[int, dict[str, int]] | None = None

    def rebase(self, mark: dict[str, int]) -> None:
        """The answers served so far are followed, in the recording, by answers this client
        was not given (they are inside a snapshot); `mark` is `then`'s place after them."""
        self._rebase = (self.served, mark)

    def refill(self, events: Iterable[Event]) -> None:
        """The whole recording, where it was given one with a gap (a snapshot not taken up).
        A rebased client keeps its own: its places count the answers it was given; one handed
        over to its live client needs none any more."""
        if self._rebase is not None or self._handed_over:
            return
        self.recorded = [
            e for e in events if isinstance(e, ModelResponded) and e.agent == self.agent
        ]

    @property
    def exhausted(self) -> bool:
        return self._handed_over or self.served >= len(self.recorded)

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelResponse:
        if not self.exhausted:
            event = self.recorded[self.served]
            self.served += 1
            return response_of(event)
        if self.then is None:
            raise ReplayExhausted(
                f"the journal records {len(self.recorded)} responses for {self.agent!r} "
                "and the run asked for another"
            )
        self._hand_over(self.then)
        return self.then.complete(messages, tools)

    def _hand_over(self, then: ModelClient) -> None:
        if self._handed_over:
            return
        if self._rebase is None:
            then.fast_forward_over([response_of(e) for e in self.recorded[: self.served]])
        else:
            since, mark = self._rebase
            then.seek(mark)
            then.advance_over([response_of(e) for e in self.recorded[since : self.served]])
        self._handed_over = True
        self.recorded = []  # served and passed on: a warm flight need not hold them

    def place(self) -> dict[str, int] | None:
        """The live client's place once every recorded answer was served (for a snapshot);
        None while answers remain, without a live client, or when it cannot tell its place."""
        if self.then is None or not self.exhausted:
            return None
        self._hand_over(self.then)
        return self.then.mark()


def split(usage: Usage, window: Sequence[ChatMessage], answer: ModelResponse) -> Usage:
    """A script's synthetic total, split between input and output in proportion to the window's
    and the answer's sizes.

    A script says only what a call costs; trace consumers compute the total as input + output,
    so a total alone reads as 0 tokens there. The parts always add up to the total the script
    gave, so bills and budgets are unchanged. Deterministic: a resumed run splits the same way.
    """
    asked = sum(m.size() for m in window)
    answered = answer.size()
    if usage.total == 0 or asked + answered == 0:
        return Usage(total=usage.total, prompt=usage.total, completion=0)
    prompt = usage.total * asked // (asked + answered)
    if answered and prompt == usage.total and usage.total > 1:
        prompt -= 1  # an answer of any length costs at least one output token
    return Usage(total=usage.total, prompt=prompt, completion=usage.total - prompt)


def response_of(event: ModelResponded) -> ModelResponse:
    """The response a ModelResponded event recorded. v1 events recorded only the usage."""
    if event.text is None or event.tool_calls is None:
        raise ModelError(
            f"the journal recorded only the usage of {event.agent}'s response at turn "
            f"{event.turn} (ModelResponded v1): it cannot be replayed"
        )
    return ModelResponse(
        text=event.text, tool_calls=list(event.tool_calls), usage=event.usage, served=event.served
    )


# --- small builders for scripts ----------------------------------------------------------------


def say(text: str, usage: int) -> ModelResponse:
    """A plain-prose answer (no tool call)."""
    return ModelResponse(text=text, usage=Usage(total=usage))


def call(name: str, usage: int, text: str = "", **args: Any) -> ModelResponse:
    """An answer that calls one tool (ScriptedClient numbers the call)."""
    return ModelResponse(
        text=text, tool_calls=[ToolCall(id="", name=name, args=args)], usage=Usage(total=usage)
    )
