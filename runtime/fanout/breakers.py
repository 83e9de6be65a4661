"""Circuit breakers: stop one failure from spreading, and the one guarded call.

`CircuitBreaker` trips on a tool's failure rate and `SpendBreaker` on a run's spending; both
refuse calls while open, let one probe through after a cool-down, and report each change as an
event the caller journals. `LoopBreaker` trips on one agent going round in circles (the agent
loop stops the agent; there is nothing to cool down). `CircuitBreaker.call` is the guarded
call: every caller that puts work behind a breaker goes through it (a team's tool belt,
`execute_guarded` for a `Tool`).

Everything takes its clock as an argument: tests move time by hand and never sleep.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from runtime import errors
from runtime.events import BreakerReset, BreakerTripped, Event
from runtime.tools import Outcome, Tool, ToolFailure, execute, failure

Clock = Callable[[], float]
T = TypeVar("T")

State = Literal["closed", "open", "half_open"]


@errors.replayable
class BreakerOpen(ToolFailure):
    """Refused without trying: the breaker is open (or its one probe is out).

    A ToolFailure, so a refused tool call reaches the worker as an observation, like any other
    tool error, instead of an exception through its loop.
    """

    def __init__(self, breaker: str, reason: str, retry_in: float | None) -> None:
        when = "until reset" if retry_in is None else f"for {retry_in:.1f} s more"
        super().__init__(f"breaker {breaker} is open ({reason}); calls refused {when}")
        self.breaker = breaker
        self.reason = reason
        self.retry_in = retry_in


class Breaker:
    """The state machine both breakers share; subclasses decide when to trip.

    closed -> open on a bad judgement; open -> half_open once `cool_down` seconds passed (read
    lazily, on the next look: there is no timer thread); half_open lets one probe through, and
    its outcome closes or re-opens. A trip with `final=True` never half-opens: only `reset` by a
    person closes it.
    """

    def __init__(
        self,
        name: str,
        cool_down: float,
        clock: Clock = time.monotonic,
        on_event: Callable[[Event], None] | None = None,
        run_id: str = "",
    ) -> None:
        self.name = name
        self.cool_down = cool_down
        self.clock = clock
        self.on_event = on_event
        self.run_id = run_id
        self._lock = threading.RLock()
        self._state: State = "closed"
        self._reason = ""
        self._final = False
        self._opened_at = 0.0
        self._probe_at: float | None = None
        self._events: list[Event] = []

    @property
    def state(self) -> State:
        with self._lock:
            self._cool()
            return self._state

    def allow(self) -> None:
        """Go ahead, or BreakerOpen. In half-open the first caller becomes the probe."""
        with self._lock:
            self._cool()
            now = self.clock()
            if self._state == "closed":
                return
            if self._state == "half_open" and self._probe_free(now):
                self._probe_at = now
                return
            raise BreakerOpen(self.name, self._refusal(), self._retry_in(now))

    def reset(self, by: str, reason: str = "") -> None:
        """A person closes the breaker, whatever tripped it."""
        with self._lock:
            if self._state != "closed":
                self._close(f"reset by {by}" + (f": {reason}" if reason else ""), {})

    def drain(self) -> list[Event]:
        """The state changes since the last drain, for the caller to journal."""
        with self._lock:
            events, self._events = self._events, []
            return events

    # -- for subclasses (called with the lock held) --

    def _trip(self, reason: str, rates: dict[str, float], final: bool = False) -> None:
        self._state = "open"
        self._reason = reason
        self._final = final
        self._opened_at = self.clock()
        self._probe_at = None
        self._emit(
            BreakerTripped(
                run_id=self.run_id,
                breaker=self.name,
                reason=reason,
                rates=rates,
                retry_in=None if final else self.cool_down,
            )
        )

    def _close(self, reason: str, rates: dict[str, float]) -> None:
        self._state = "closed"
        self._reason = ""
        self._final = False
        self._probe_at = None
        self._forget()
        self._emit(BreakerReset(run_id=self.run_id, breaker=self.name, reason=reason, rates=rates))

    def _forget(self) -> None:
        """Drop what the old judgement rested on, so a closed breaker starts afresh."""

    # -- internals --

    def _cool(self) -> None:
        cooled = self.clock() - self._opened_at >= self.cool_down
        if self._state == "open" and not self._final and cooled:
            self._state = "half_open"
            self._probe_at = None

    def _probe_free(self, now: float) -> bool:
        # A probe that never reported (its caller crashed) frees the slot after a cool-down,
        # or the breaker would stay half-open forever.
        return self._probe_at is None or now - self._probe_at >= self.cool_down

    def _refusal(self) -> str:
        return "probe in flight" if self._state == "half_open" else self._reason

    def _retry_in(self, now: float) -> float | None:
        if self._final:
            return None
        since = self._opened_at
        if self._state == "half_open" and self._probe_at is not None:
            since = self._probe_at
        return max(0.0, self.cool_down - (now - since))

    def _emit(self, event: Event) -> None:
        self._events.append(event)
        if self.on_event is not None:
            self.on_event(event)


class CircuitBreaker(Breaker):
    """Trips when at least `max_failure_rate` of the last `window` calls failed, once at least
    `min_calls` were seen (two failures out of two is a coincidence, not a rate)."""

    def __init__(
        self,
        name: str,
        *,
        window: int = 20,
        min_calls: int = 5,
        max_failure_rate: float = 0.5,
        cool_down: float = 30.0,
        clock: Clock = time.monotonic,
        on_event: Callable[[Event], None] | None = None,
        run_id: str = "",
    ) -> None:
        if not 0 < min_calls <= window or not 0 < max_failure_rate <= 1:
            raise ValueError("need 0 < min_calls <= window and 0 < max_failure_rate <= 1")
        super().__init__(name, cool_down, clock, on_event, run_id)
        self.min_calls = min_calls
        self.max_failure_rate = max_failure_rate
        self._calls: deque[bool] = deque(maxlen=window)  # True for a failure

    def record(self, ok: bool) -> None:
        """The outcome of a call that `allow` let through."""
        with self._lock:
            self._cool()
            if self._state == "half_open":
                self._settle_probe(ok)
            elif self._state == "closed":
                self._calls.append(not ok)
                rates = self.rates()
                if len(self._calls) >= self.min_calls and rates["failure_rate"] >= (
                    self.max_failure_rate
                ):
                    self._trip("failure rate", rates)
            # open: a call let through before the trip finishing late; the trip stands.

    def call(self, fn: Callable[[], T], failed: Callable[[T], bool] | None = None) -> T:
        """The guarded call: `fn()` unless the breaker is open (BreakerOpen, at once, without
        calling). An exception counts as a failure and goes on up; so does a result that
        `failed` says is one (an `Outcome` carrying an error, say)."""
        self.allow()
        try:
            result = fn()
        except Exception:
            self.record(False)
            raise
        self.record(failed is None or not failed(result))
        return result

    def rates(self) -> dict[str, float]:
        with self._lock:
            calls = len(self._calls)
            failed = sum(self._calls)
            return {"failure_rate": failed / calls if calls else 0.0, "calls": float(calls)}

    def _settle_probe(self, ok: bool) -> None:
        if ok:
            self._close("probe succeeded", self.rates())
        else:
            self._trip("probe failed", self.rates())

    def _forget(self) -> None:
        self._calls.clear()


def execute_guarded(tool: Tool, args: dict[str, Any], breaker: CircuitBreaker) -> Outcome:
    """`runtime.tools.execute` behind a breaker: an open breaker answers at once with a
    BreakerOpen observation; otherwise the outcome (timeouts included) is recorded."""
    try:
        return breaker.call(lambda: execute(tool, args), failed=lambda outcome: outcome.failed)
    except BreakerOpen as exc:
        return failure(tool.name, exc)


class SpendBreaker(Breaker):
    """A run's spending: trips when tokens in the last `window_seconds` exceed `max_rate` per
    second on average, or when the run's total passes `cap`.

    A rate trip cools down like any breaker; keep `cool_down >= window_seconds`, or the probe is
    judged on a window that still holds the spike and fails for it. A cap trip is final:
    waiting does not un-spend tokens, so only a person's `reset` (with a reason) reopens spending.
    """

    def __init__(
        self,
        run_id: str,
        *,
        max_rate: float | None = None,
        window_seconds: float = 60.0,
        cap: int | None = None,
        cool_down: float | None = None,
        clock: Clock = time.monotonic,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        if max_rate is None and cap is None:
            raise ValueError("a spend breaker needs a max_rate, a cap, or both")
        super().__init__(
            f"spend:{run_id}",
            window_seconds if cool_down is None else cool_down,
            clock,
            on_event,
            run_id,
        )
        self.max_rate = max_rate
        self.window_seconds = window_seconds
        self.cap = cap
        self.spent = 0
        self._spends: deque[tuple[float, int]] = deque()

    def record(self, tokens: int) -> None:
        """Tokens a call just spent (model calls included: this is what runs away)."""
        with self._lock:
            self._cool()
            self.spent += tokens
            self._spends.append((self.clock(), tokens))
            rates = self.rates()
            if self.cap is not None and self.spent > self.cap:
                if not (self._state == "open" and self._final):
                    self._trip(
                        f"spent {self.spent} tokens, over the cap of {self.cap}", rates, True
                    )
                return
            too_fast = self.max_rate is not None and rates["tokens_per_second"] > self.max_rate
            if self._state == "half_open":
                if too_fast:
                    self._trip("probe spent too fast", rates)
                else:
                    self._close("spend rate back under the limit", rates)
            elif self._state == "closed" and too_fast:
                self._trip("spend rate", rates)

    def rates(self) -> dict[str, float]:
        with self._lock:
            cutoff = self.clock() - self.window_seconds
            while self._spends and self._spends[0][0] <= cutoff:
                self._spends.popleft()
            recent = sum(tokens for _, tokens in self._spends)
            return {
                "tokens_per_second": recent / self.window_seconds,
                "window_tokens": float(recent),
                "spent": float(self.spent),
            }


class LoopBreaker:
    """One agent's run going round in circles: the same call (tool and arguments) `repeats`
    times in a row, or the same failure (tool, error type and message: the signature of one
    conflict met again and again) that many times in a row, whatever the arguments.

    Judged on the model's calls and their recorded outcomes alone, so a replayed run trips at
    the same place. `before` is asked before a call runs (the repeat is not run), `after` once
    it has; each returns why it trips, or None.
    """

    def __init__(self, repeats: int) -> None:
        if repeats < 2:
            raise ValueError("a loop needs at least two repeats")
        self.repeats = repeats
        self._call: tuple[str, str] | None = None
        self._calls = 0
        self._failure: tuple[str, str, str] | None = None
        self._failures = 0

    def state(self) -> list[Any]:
        """What it counts so far, as JSON (a loop snapshot keeps it: runtime/snapshots.py)."""
        return [self._call, self._calls, self._failure, self._failures]

    def take(self, state: list[Any]) -> None:
        """Count on from a `state` it gave."""
        call, self._calls, failure, self._failures = state
        self._call = (call[0], call[1]) if call else None
        self._failure = (failure[0], failure[1], failure[2]) if failure else None

    def before(self, tool: str, args: dict[str, Any]) -> str | None:
        call = (tool, json.dumps(args, sort_keys=True, default=str))
        self._calls = self._calls + 1 if call == self._call else 1
        self._call = call
        if self._calls >= self.repeats:
            return f"{tool} called {self._calls} times in a row with the same arguments"
        return None

    def after(self, tool: str, outcome: Outcome) -> str | None:
        if outcome.error is None:
            self._failure, self._failures = None, 0
            return None
        failure = (tool, outcome.error.type, outcome.error.message)
        self._failures = self._failures + 1 if failure == self._failure else 1
        self._failure = failure
        if self._failures >= self.repeats:
            return f"{tool} failed the same way {self._failures} times in a row ({outcome.error})"
        return None
