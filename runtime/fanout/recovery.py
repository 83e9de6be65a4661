"""Structural recovery for parallel specialists: what to do when one fails, and how to stop
one failure from spreading.

- `route` decides, from a failed report's reason code, between a retry with a bigger budget,
  a reassignment to another worker or tool belt, a cached fallback (which makes the answer
  degraded, and says so), and escalation to a person (the dead-letter queue). Every branch is
  capped: a router without caps is a runaway loop with extra steps.
- `Supervisor` counts restarts per worker within a window and gives up over a cap.
- `CircuitBreaker` trips on a tool's failure rate and `SpendBreaker` on a run's spending;
  both refuse calls while open, let one probe through after a cool-down, and report each change
  as an event the caller journals.
- `Bulkhead` and `Bulkheads` cap how many workers run at once, per pool and per run.

Everything takes its clock as an argument: tests move time by hand and never sleep.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, TypeAdapter

from runtime.events import BreakerReset, BreakerTripped, Event, RecoveryRouted
from runtime.fanout.contracts import Contract, Handoff, Reason, Report
from runtime.tools import Outcome, Tool, ToolFailure, execute, failure

Clock = Callable[[], float]
T = TypeVar("T")

# --- actions -----------------------------------------------------------------------------------


class Retry(Contract):
    """Run the sub-task again with `handoff`: a bigger budget, or a clarified objective."""

    action: Literal["retry"] = "retry"
    handoff: Handoff
    why: str


class Reassign(Contract):
    """Give the sub-task to another worker (or the same job with another tool belt)."""

    action: Literal["reassign"] = "reassign"
    to: str
    handoff: Handoff
    why: str


class Fallback(Contract):
    """Use a cached answer instead of a live one. The answer must say it is degraded."""

    action: Literal["fallback"] = "fallback"
    source: str
    text: str
    degraded: str


class Escalate(Contract):
    """Stop trying: the sub-task goes to a person (the dead-letter queue) with its reason."""

    action: Literal["escalate"] = "escalate"
    code: Reason
    reason: str


Action = Annotated[Retry | Reassign | Fallback | Escalate, Field(discriminator="action")]
_ACTION = TypeAdapter(Action)


def parse_action(data: Mapping[str, Any]) -> Retry | Reassign | Fallback | Escalate:
    """An action back from its journalled dict (`RecoveryRouted.action`)."""
    return _ACTION.validate_python(dict(data))


# --- what the router knows about a sub-task ----------------------------------------------------


class Tried(Contract):
    """One earlier attempt of a sub-task: who ran it and why it failed."""

    worker_id: str
    reason: Reason


class Attempt(Contract):
    """The attempt a report answers: its hand-off, and the failures before it.

    The history is what makes the caps work (budget retries, clarifications, workers already
    tried) without the router keeping state of its own; on a Celery worker it is folded back
    from the run's `RecoveryRouted` events.
    """

    handoff: Handoff
    history: tuple[Tried, ...] = ()

    @property
    def number(self) -> int:
        return len(self.history) + 1

    def count(self, reason: Reason) -> int:
        return sum(1 for t in self.history if t.reason == reason)

    def workers(self) -> list[str]:
        """Workers that have had this sub-task, the current one first, then most recent first."""
        seen = [self.handoff.worker_id]
        for tried in reversed(self.history):
            if tried.worker_id not in seen:
                seen.append(tried.worker_id)
        return seen

    def follow(self, report: Report, action: Retry | Reassign) -> Attempt:
        """The attempt `action` starts after `report` failed this one."""
        if report.reason is None:
            raise ValueError("an ok report starts no further attempt")
        return Attempt(
            handoff=action.handoff,
            history=(*self.history, Tried(worker_id=report.worker_id, reason=report.reason)),
        )


class Alternate(Contract):
    """Who takes over a sub-task when a worker's tools fail it."""

    worker_id: str
    allowed_tools: list[str] = Field(min_length=1)


class Cached(Contract):
    """A stored answer for a worker's sub-task, and where it came from (shown to the reader)."""

    source: str
    text: str


def clarify(handoff: Handoff) -> str:
    """The default clarification: narrow the objective to its literal reading.

    A supervisor with a model can pass a better one (`RecoveryPolicy.clarify`); this one is
    deterministic, so a replayed run clarifies the same way.
    """
    return (
        f"{handoff.objective} Answer exactly this and nothing broader, from the inputs given; "
        "where two readings remain, take the narrower one and name it in 'degraded'."
    )


@dataclass(frozen=True)
class RecoveryPolicy:
    """The router's caps and options. Budgets grow by `budget_factor` per retry, up to the caps."""

    budget_retries: int = 2
    budget_factor: float = 2.0
    max_steps: int = 32
    max_tokens: int = 200_000
    max_deadline_seconds: float = 900.0
    clarifications: int = 1
    max_attempts: int = 4  # across all reasons: mixed failures must not loop forever either
    alternatives: Mapping[str, Alternate] = field(default_factory=dict)  # by failing worker id
    fallbacks: Mapping[str, Cached] = field(default_factory=dict)  # by worker id
    clarify: Callable[[Handoff], str] = clarify

    def __post_init__(self) -> None:
        if self.budget_factor <= 1:
            raise ValueError("budget_factor must be above 1: a retry needs a bigger budget")
        if min(self.budget_retries, self.clarifications) < 0 or self.max_attempts < 1:
            raise ValueError("retry counts must be >= 0 and max_attempts >= 1")


# --- the router --------------------------------------------------------------------------------


def route(
    report: Report, attempt: Attempt, policy: RecoveryPolicy
) -> Retry | Reassign | Fallback | Escalate:
    """Decide what to do about a failed report, on its reason code and the attempt's history."""
    if report.ok or report.reason is None:
        raise ValueError(f"{report.worker_id} reported ok: there is nothing to recover")
    if report.worker_id != attempt.handoff.worker_id:
        raise ValueError(
            f"report from {report.worker_id!r} does not answer the attempt given to "
            f"{attempt.handoff.worker_id!r}"
        )
    action = _ROUTES[report.reason](attempt, policy)
    # The cap bounds attempts, so it stops only actions that start one; a fallback is terminal.
    if isinstance(action, Retry | Reassign) and not _may_try_again(attempt, policy):
        return Escalate(
            code=report.reason,
            reason=f"{attempt.number} attempts made, the cap is {policy.max_attempts}",
        )
    return action


def _may_try_again(attempt: Attempt, policy: RecoveryPolicy) -> bool:
    return attempt.number < policy.max_attempts


def _on_budget(attempt: Attempt, policy: RecoveryPolicy) -> Retry | Escalate:
    spent = attempt.count("budget")
    if spent >= policy.budget_retries:
        return Escalate(code="budget", reason=f"out of budget after {spent} bigger budgets")
    handoff = attempt.handoff
    bigger = grow(handoff, policy)
    # More time alone is no bigger budget: the steps or the tokens must grow.
    if (bigger.max_steps, bigger.max_tokens) == (handoff.max_steps, handoff.max_tokens):
        return Escalate(code="budget", reason="out of budget at the policy's caps")
    return Retry(
        handoff=bigger,
        why=f"budget: {handoff.max_steps}->{bigger.max_steps} steps, "
        f"{handoff.max_tokens}->{bigger.max_tokens} tokens",
    )


def grow(handoff: Handoff, policy: RecoveryPolicy) -> Handoff:
    """The hand-off with steps, tokens and deadline multiplied by the factor, each capped.

    The deadline grows too: twice the steps in the same time would only turn a budget failure
    into a timeout.
    """
    factor = policy.budget_factor
    return handoff.revised(
        max_steps=math.ceil(_grown(handoff.max_steps, factor, policy.max_steps)),
        max_tokens=math.ceil(_grown(handoff.max_tokens, factor, policy.max_tokens)),
        deadline_seconds=_grown(handoff.deadline_seconds, factor, policy.max_deadline_seconds),
    )


def _grown(value: float, factor: float, cap: float) -> float:
    """`value * factor`, up to the cap, and never below where it was (a hand-off may already
    exceed a cap the policy sets later)."""
    return max(value, min(cap, value * factor))


def _on_tool_error(attempt: Attempt, policy: RecoveryPolicy) -> Reassign | Fallback | Escalate:
    handoff = attempt.handoff
    tried = attempt.workers()
    alternate = policy.alternatives.get(handoff.worker_id)
    # An alternate already tried would bounce the sub-task between two broken workers; with
    # no attempt left, the cache below is still better than escalating.
    fresh = alternate is not None and alternate.worker_id not in tried
    if alternate is not None and fresh and _may_try_again(attempt, policy):
        return Reassign(
            to=alternate.worker_id,
            handoff=handoff.revised(
                worker_id=alternate.worker_id, allowed_tools=alternate.allowed_tools
            ),
            why=f"tool error in {handoff.worker_id}'s tools",
        )
    for worker_id in tried:
        cached = policy.fallbacks.get(worker_id)
        if cached is not None:
            return Fallback(
                source=cached.source,
                text=cached.text,
                degraded=f"{handoff.worker_id} failed (tool error); "
                f"answered from the cached {cached.source}",
            )
    return Escalate(code="tool_error", reason="tool error, with no alternate and no cache")


def _on_ambiguous(attempt: Attempt, policy: RecoveryPolicy) -> Retry | Escalate:
    asked = attempt.count("ambiguous")
    if asked >= policy.clarifications:
        return Escalate(code="ambiguous", reason=f"still ambiguous after {asked} clarification(s)")
    handoff = attempt.handoff
    return Retry(
        handoff=handoff.revised(objective=policy.clarify(handoff)), why="clarified objective"
    )


def _on_refused(attempt: Attempt, policy: RecoveryPolicy) -> Escalate:
    # A refusal is a judgement, not a fault: retrying it elsewhere is shopping for a yes.
    return Escalate(code="refused", reason=f"{attempt.handoff.worker_id} refused the task")


_ROUTES: dict[
    Reason, Callable[[Attempt, RecoveryPolicy], Retry | Reassign | Fallback | Escalate]
] = {
    "budget": _on_budget,
    "tool_error": _on_tool_error,
    "ambiguous": _on_ambiguous,
    "refused": _on_refused,
}


def timeout_report(handoff: Handoff, steps: int = 0, tokens: int = 0) -> Report:
    """The report a worker that missed its deadline did not write: time is a budget too."""
    return Report(
        worker_id=handoff.worker_id, status="failed", reason="budget", steps=steps, tokens=tokens
    )


def routed_event(
    report: Report, attempt: Attempt, action: Retry | Reassign | Fallback | Escalate, run_id: str
) -> RecoveryRouted:
    """The event recording a routing decision."""
    return RecoveryRouted(
        run_id=run_id,
        agent=report.worker_id,
        worker_id=report.worker_id,
        reason=report.reason or "",
        attempt=attempt.number,
        action=action.model_dump(mode="json"),
    )


# --- supervisor: restarts with a cap -----------------------------------------------------------


@dataclass(frozen=True)
class Restart:
    worker_id: str
    count: int  # restarts within the window, this one included


@dataclass(frozen=True)
class GiveUp:
    worker_id: str
    count: int
    window_seconds: float


class Supervisor:
    """Let it crash, within reason: up to `max_restarts` restarts of a worker per window.

    Giving up is final for that worker: a restart loop that pauses long enough to leave the
    window is still a restart loop, and deciding otherwise is a person's call.
    """

    def __init__(
        self, max_restarts: int = 3, window_seconds: float = 60.0, clock: Clock = time.monotonic
    ) -> None:
        self.max_restarts = max_restarts
        self.window_seconds = window_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._restarts: dict[str, deque[float]] = {}
        self._gave_up: set[str] = set()

    def restart(self, worker_id: str) -> Restart | GiveUp:
        """Ask to restart a worker: a Restart to go ahead, or GiveUp when over the cap."""
        with self._lock:
            recent = self._recent(worker_id)
            if worker_id in self._gave_up or len(recent) >= self.max_restarts:
                self._gave_up.add(worker_id)
                return GiveUp(worker_id, len(recent), self.window_seconds)
            recent.append(self.clock())
            return Restart(worker_id, len(recent))

    def restarts(self, worker_id: str) -> int:
        with self._lock:
            return len(self._recent(worker_id))

    def _recent(self, worker_id: str) -> deque[float]:
        recent = self._restarts.setdefault(worker_id, deque())
        cutoff = self.clock() - self.window_seconds
        while recent and recent[0] <= cutoff:
            recent.popleft()
        return recent


# --- breakers ----------------------------------------------------------------------------------

State = Literal["closed", "open", "half_open"]


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

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn` under the breaker: refused while open, an exception counts as a failure."""
        self.allow()
        try:
            result = fn(*args, **kwargs)
        except Exception:
            self.record(False)
            raise
        self.record(True)
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
        breaker.allow()
    except BreakerOpen as exc:
        return failure(tool.name, exc)
    outcome = execute(tool, args)
    breaker.record(not outcome.failed)
    return outcome


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


# --- bulkheads: caps on parallel workers -------------------------------------------------------


class BulkheadFull(Exception):
    def __init__(self, name: str, limit: int) -> None:
        super().__init__(f"bulkhead {name} is full ({limit} in use)")
        self.name = name
        self.limit = limit


@dataclass(frozen=True)
class BulkheadStats:
    name: str
    limit: int
    in_use: int
    peak: int
    admitted: int
    waited: int  # admissions and refusals that had to wait for a slot first
    rejected: int  # refused: no slot at once (try_acquire) or within the timeout


class Bulkhead:
    """A bounded semaphore that counts: how many got in, waited, were turned away.

    The counts are the backpressure signal: a pool whose `rejected` climbs needs fewer
    fan-outs or more workers, and the numbers say which pool.
    """

    def __init__(self, name: str, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"bulkhead {name}: limit must be at least 1")
        self.name = name
        self.limit = limit
        self._cond = threading.Condition()
        self._in_use = 0
        self._peak = 0
        self._admitted = 0
        self._waited = 0
        self._rejected = 0

    def try_acquire(self) -> bool:
        """A slot now, or False at once."""
        return self.acquire(timeout=0)

    def acquire(self, timeout: float | None = None) -> bool:
        """A slot within `timeout` seconds (None: wait as long as it takes), or False."""
        with self._cond:
            if self._in_use >= self.limit:
                if timeout is not None and timeout <= 0:
                    self._rejected += 1
                    return False
                self._waited += 1
                if not self._cond.wait_for(lambda: self._in_use < self.limit, timeout):
                    self._rejected += 1
                    return False
            self._in_use += 1
            self._admitted += 1
            self._peak = max(self._peak, self._in_use)
            return True

    def release(self) -> None:
        with self._cond:
            if self._in_use == 0:
                raise RuntimeError(f"bulkhead {self.name}: released more slots than acquired")
            self._in_use -= 1
            self._cond.notify()

    @contextmanager
    def slot(self, timeout: float | None = None) -> Iterator[None]:
        """Hold a slot for the block, or raise BulkheadFull."""
        if not self.acquire(timeout):
            raise BulkheadFull(self.name, self.limit)
        try:
            yield
        finally:
            self.release()

    def stats(self) -> BulkheadStats:
        with self._cond:
            return BulkheadStats(
                self.name,
                self.limit,
                self._in_use,
                self._peak,
                self._admitted,
                self._waited,
                self._rejected,
            )


class Bulkheads:
    """A bulkhead per worker pool and one per run: a worker needs a slot in both.

    The pool cap keeps one kind of specialist (say, everything behind a slow orders API) from
    taking every thread; the run cap keeps one run's fan-out from starving the other runs.
    Slots are taken run first, then pool, always in that order, so two callers cannot each
    hold what the other waits for.
    """

    def __init__(self, pools: Mapping[str, int], per_run: int) -> None:
        self.pools = {name: Bulkhead(f"pool:{name}", limit) for name, limit in pools.items()}
        self.per_run = per_run
        self._runs: dict[str, Bulkhead] = {}
        self._lock = threading.Lock()

    def run(self, run_id: str) -> Bulkhead:
        with self._lock:
            if run_id not in self._runs:
                self._runs[run_id] = Bulkhead(f"run:{run_id}", self.per_run)
            return self._runs[run_id]

    def acquire(self, pool: str, run_id: str, timeout: float | None = None) -> bool:
        """Slots in the run's and the pool's bulkheads within `timeout` in all, or neither."""
        return self._enter(pool, run_id, timeout) is None

    def try_acquire(self, pool: str, run_id: str) -> bool:
        return self.acquire(pool, run_id, timeout=0)

    def _enter(self, pool: str, run_id: str, timeout: float | None) -> Bulkhead | None:
        """None when both slots are held; otherwise the bulkhead that turned us away."""
        deadline = None if timeout is None else time.monotonic() + timeout
        run, shared = self.run(run_id), self.pools[pool]
        if not run.acquire(timeout):
            return run
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not shared.acquire(left):
            run.release()
            return shared
        return None

    def release(self, pool: str, run_id: str) -> None:
        self.pools[pool].release()
        self.run(run_id).release()

    @contextmanager
    def slot(self, pool: str, run_id: str, timeout: float | None = None) -> Iterator[None]:
        refused = self._enter(pool, run_id, timeout)
        if refused is not None:
            raise BulkheadFull(refused.name, refused.limit)
        try:
            yield
        finally:
            self.release(pool, run_id)

    def forget(self, run_id: str) -> None:
        """Drop a finished run's bulkhead (kept while any of its slots is held)."""
        with self._lock:
            bulkhead = self._runs.get(run_id)
            if bulkhead is not None and bulkhead.stats().in_use == 0:
                del self._runs[run_id]
