from __future__ import annotations

import pytest

from runtime import flat
from runtime.events import BreakerReset, BreakerTripped
from runtime.fanout.breakers import BreakerOpen, CircuitBreaker, SpendBreaker, execute_guarded
from runtime.fanout.contracts import Handoff, Report
from runtime.fanout.routing import (
    Alternate,
    Attempt,
    Cached,
    Escalate,
    Fallback,
    Reassign,
    RecoveryPolicy,
    Retry,
    route,
    routed_event,
    timeout_report,
)
from runtime.tools import Tool, ToolFailure, schema


class FakeClock:
    """Time that moves only when a test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def handoff(worker_id="billing", **changes):
    fields = {
        "worker_id": worker_id,
        "objective": "Establish what order A-4471 was charged.",
        "inputs": {"order_id": "A-4471"},
        "allowed_tools": ["orders.find_order"],
        "max_steps": 3,
        "max_tokens": 4000,
        "return_contract": "findings with call ids",
        "deadline_seconds": 30,
    }
    return Handoff(**(fields | changes))


def failed(reason, worker_id="billing"):
    return Report(worker_id=worker_id, status="failed", reason=reason, steps=3, tokens=4000)


# --- the router --------------------------------------------------------------------------------


def test_budget_retries_with_a_bigger_budget_then_escalates():
    policy = RecoveryPolicy(budget_retries=2, budget_factor=2.0)
    attempt = Attempt(handoff=handoff())

    first = route(failed("budget"), attempt, policy)
    assert isinstance(first, Retry)
    assert (first.handoff.max_steps, first.handoff.max_tokens) == (6, 8000)
    assert first.handoff.deadline_seconds == 60  # more work needs more time
    assert first.handoff.objective == attempt.handoff.objective

    attempt = attempt.follow(failed("budget"), first)
    second = route(failed("budget"), attempt, policy)
    assert isinstance(second, Retry)
    assert (second.handoff.max_steps, second.handoff.max_tokens) == (12, 16000)

    attempt = attempt.follow(failed("budget"), second)
    assert attempt.number == 3
    third = route(failed("budget"), attempt, policy)
    assert isinstance(third, Escalate) and third.code == "budget"


def test_budget_growth_stops_at_the_caps_and_escalates_there():
    policy = RecoveryPolicy(budget_retries=5, max_steps=4, max_tokens=5000)
    attempt = Attempt(handoff=handoff())
    retry = route(failed("budget"), attempt, policy)
    assert isinstance(retry, Retry)
    assert (retry.handoff.max_steps, retry.handoff.max_tokens) == (4, 5000)

    at_cap = attempt.follow(failed("budget"), retry)
    assert isinstance(route(failed("budget"), at_cap, policy), Escalate)


def test_tool_error_reassigns_to_the_alternate_then_falls_back_to_the_cache():
    policy = RecoveryPolicy(
        alternatives={
            "billing": Alternate(worker_id="billing-ledger", allowed_tools=["ledger.lookup"])
        },
        fallbacks={"billing": Cached(source="billing snapshot 2026-07", text="one charge")},
    )
    attempt = Attempt(handoff=handoff())
    action = route(failed("tool_error"), attempt, policy)
    assert isinstance(action, Reassign)
    assert action.to == "billing-ledger"
    assert action.handoff.worker_id == "billing-ledger"
    assert action.handoff.allowed_tools == ["ledger.lookup"]
    assert action.handoff.objective == attempt.handoff.objective

    attempt = attempt.follow(failed("tool_error"), action)
    again = route(failed("tool_error", worker_id="billing-ledger"), attempt, policy)
    assert isinstance(again, Fallback)  # the original worker's cache still serves
    assert again.source == "billing snapshot 2026-07" and again.text == "one charge"
    assert again.degraded == (
        "billing-ledger failed (tool error); answered from the cached billing snapshot 2026-07"
    )


def test_tool_error_never_bounces_between_two_workers():
    policy = RecoveryPolicy(
        alternatives={
            "a": Alternate(worker_id="b", allowed_tools=["t2"]),
            "b": Alternate(worker_id="a", allowed_tools=["t1"]),
        }
    )
    attempt = Attempt(handoff=handoff("a"))
    to_b = route(failed("tool_error", "a"), attempt, policy)
    assert isinstance(to_b, Reassign) and to_b.to == "b"
    back = route(failed("tool_error", "b"), attempt.follow(failed("tool_error", "a"), to_b), policy)
    assert isinstance(back, Escalate) and back.code == "tool_error"


def test_tool_error_with_no_alternate_uses_the_cache_or_escalates():
    cached = RecoveryPolicy(fallbacks={"billing": Cached(source="snapshot", text="t")})
    assert isinstance(route(failed("tool_error"), Attempt(handoff=handoff()), cached), Fallback)
    bare = route(failed("tool_error"), Attempt(handoff=handoff()), RecoveryPolicy())
    assert isinstance(bare, Escalate) and bare.code == "tool_error"


def test_ambiguous_retries_once_with_a_clarified_objective_then_escalates():
    policy = RecoveryPolicy()
    attempt = Attempt(handoff=handoff())
    retry = route(failed("ambiguous"), attempt, policy)
    assert isinstance(retry, Retry)
    assert retry.handoff.objective.startswith(attempt.handoff.objective)
    assert retry.handoff.objective != attempt.handoff.objective
    assert retry.handoff.max_tokens == attempt.handoff.max_tokens  # same budget

    still = route(failed("ambiguous"), attempt.follow(failed("ambiguous"), retry), policy)
    assert isinstance(still, Escalate) and still.code == "ambiguous"


def test_a_custom_clarifier_is_used():
    policy = RecoveryPolicy(clarify=lambda h: "Only the charge on 2026-07-01.")
    retry = route(failed("ambiguous"), Attempt(handoff=handoff()), policy)
    assert isinstance(retry, Retry)
    assert retry.handoff.objective == "Only the charge on 2026-07-01."


def test_refused_escalates_at_once():
    policy = RecoveryPolicy(
        alternatives={"billing": Alternate(worker_id="other", allowed_tools=["t"])},
        fallbacks={"billing": Cached(source="s", text="t")},
    )
    action = route(failed("refused"), Attempt(handoff=handoff()), policy)
    assert isinstance(action, Escalate) and action.code == "refused"


def test_mixed_failures_stop_at_max_attempts():
    policy = RecoveryPolicy(max_attempts=3, budget_retries=5, clarifications=5)
    attempt = Attempt(handoff=handoff())
    for reason in ["budget", "ambiguous"]:
        action = route(failed(reason), attempt, policy)
        assert isinstance(action, Retry)
        attempt = attempt.follow(failed(reason), action)
    final = route(failed("budget"), attempt, policy)
    assert isinstance(final, Escalate) and "3 attempts" in final.reason


def test_with_no_attempt_left_a_tool_error_still_uses_the_cache():
    policy = RecoveryPolicy(
        max_attempts=1,
        alternatives={"billing": Alternate(worker_id="billing-ledger", allowed_tools=["t"])},
        fallbacks={"billing": Cached(source="snapshot", text="t")},
    )
    assert isinstance(route(failed("tool_error"), Attempt(handoff=handoff()), policy), Fallback)
    no_cache = RecoveryPolicy(max_attempts=1, alternatives=policy.alternatives)
    assert isinstance(route(failed("tool_error"), Attempt(handoff=handoff()), no_cache), Escalate)


def test_the_router_refuses_an_ok_report_and_a_report_for_another_attempt():
    with pytest.raises(ValueError, match="nothing to recover"):
        route(
            Report(worker_id="billing", status="ok"), Attempt(handoff=handoff()), RecoveryPolicy()
        )
    with pytest.raises(ValueError, match="does not answer"):
        route(failed("budget", "policy"), Attempt(handoff=handoff()), RecoveryPolicy())


def test_a_timeout_is_routed_as_a_budget_failure():
    h = handoff()
    report = timeout_report(h, steps=2, tokens=1200)
    assert (report.status, report.reason) == ("failed", "budget")
    assert isinstance(route(report, Attempt(handoff=h), RecoveryPolicy()), Retry)


def test_a_routed_action_survives_the_journal():
    policy = RecoveryPolicy(fallbacks={"billing": Cached(source="snap", text="t")})
    attempt = Attempt(handoff=handoff())
    for reason in ["budget", "tool_error", "refused"]:
        action = route(failed(reason), attempt, policy)
        event = routed_event(failed(reason), attempt, action, run_id="r-1")
        back = flat.loads(flat.dumps(event, "run-r-1", 1), 1).event
        assert back.action == action.model_dump(mode="json")  # type: ignore[attr-defined]


# --- circuit breaker ---------------------------------------------------------------------------


def breaker(clock, **kw):
    seen = []
    options = {"window": 10, "min_calls": 4, "max_failure_rate": 0.5, "cool_down": 30}
    cb = CircuitBreaker("orders", clock=clock, on_event=seen.append, **(options | kw))
    return cb, seen


def test_the_breaker_waits_for_enough_calls_then_trips_on_the_failure_rate():
    cb, seen = breaker(FakeClock())
    for _ in range(3):
        cb.allow()
        cb.record(False)
    assert cb.state == "closed"  # three failures are not yet a rate
    cb.allow()
    cb.record(False)
    assert cb.state == "open"
    [tripped] = seen
    assert isinstance(tripped, BreakerTripped)
    assert tripped.breaker == "orders" and tripped.reason == "failure rate"
    assert tripped.rates == {"failure_rate": 1.0, "calls": 4.0}
    assert tripped.retry_in == 30
    assert cb.drain() == seen and cb.drain() == []


def test_the_breaker_judges_a_sliding_window():
    cb, _ = breaker(FakeClock(), window=4, min_calls=4)
    for ok in [False, True, True, True, False, True]:  # never 2 failures among the last 4
        cb.record(ok)
    assert cb.state == "closed"
    cb.record(False)  # last four: T, F, T, F
    assert cb.state == "open"
    assert cb.rates()["failure_rate"] == 0.5


def test_an_open_breaker_refuses_without_calling():
    cb, _ = breaker(FakeClock(), min_calls=1)
    cb.record(False)
    calls = []
    with pytest.raises(BreakerOpen) as refused:
        cb.call(lambda: calls.append(1))
    assert calls == []
    assert isinstance(refused.value, ToolFailure)  # reaches a worker as an observation
    assert refused.value.breaker == "orders" and refused.value.retry_in == 30


def test_after_the_cool_down_one_probe_goes_through_and_success_closes():
    clock = FakeClock()
    cb, seen = breaker(clock, min_calls=1)
    cb.record(False)
    clock.advance(29.9)
    assert cb.state == "open"
    clock.advance(0.1)
    assert cb.state == "half_open"
    cb.allow()  # the probe
    with pytest.raises(BreakerOpen, match="probe in flight"):
        cb.allow()
    cb.record(True)
    assert cb.state == "closed"
    assert isinstance(seen[-1], BreakerReset) and seen[-1].reason == "probe succeeded"
    assert cb.rates()["calls"] == 0  # the closed breaker judges afresh
    cb.allow()


def test_a_failed_probe_reopens_for_another_cool_down():
    clock = FakeClock()
    cb, seen = breaker(clock, min_calls=1)
    cb.record(False)
    clock.advance(30)
    with pytest.raises(RuntimeError):
        cb.call(lambda: (_ for _ in ()).throw(RuntimeError("still down")))
    assert cb.state == "open"
    assert [type(e) for e in seen] == [BreakerTripped, BreakerTripped]
    assert seen[-1].reason == "probe failed"  # type: ignore[attr-defined]
    clock.advance(29)
    assert cb.state == "open"
    clock.advance(1)
    assert cb.state == "half_open"


def test_a_probe_that_never_reports_frees_its_slot_after_a_cool_down():
    clock = FakeClock()
    cb, _ = breaker(clock, min_calls=1)
    cb.record(False)
    clock.advance(30)
    cb.allow()  # the probe's caller dies and never records
    clock.advance(10)
    with pytest.raises(BreakerOpen):
        cb.allow()
    clock.advance(20)
    cb.allow()  # a new probe


def test_guarded_execution_trips_and_then_answers_without_running_the_tool():
    runs = []

    def find_order():
        runs.append(1)
        raise ToolFailure("orders API 503")

    tool = Tool("orders.find_order", "d", schema({}), find_order, timeout=None)
    cb, _ = breaker(FakeClock(), min_calls=2)
    for _ in range(2):
        assert execute_guarded(tool, {}, cb).failed
    assert len(runs) == 2 and cb.state == "open"
    refused = execute_guarded(tool, {}, cb)
    assert refused.error is not None and refused.error.type == "BreakerOpen"
    assert len(runs) == 2


# --- spend breaker -----------------------------------------------------------------------------


def test_the_spend_breaker_trips_on_rate_and_recovers_after_the_window():
    clock = FakeClock()
    seen = []
    spend = SpendBreaker("r-1", max_rate=10, window_seconds=10, clock=clock, on_event=seen.append)
    spend.allow()
    spend.record(60)
    clock.advance(1)
    spend.allow()
    spend.record(50)  # 110 tokens in 10 s: 11 per second
    assert spend.state == "open"
    [tripped] = seen
    assert isinstance(tripped, BreakerTripped) and tripped.breaker == "spend:r-1"
    assert tripped.rates["tokens_per_second"] == 11.0 and tripped.rates["spent"] == 110
    with pytest.raises(BreakerOpen):
        spend.allow()

    clock.advance(10)  # cool-down defaults to the window: the spike has left it
    assert spend.state == "half_open"
    spend.allow()
    spend.record(20)
    assert spend.state == "closed"
    assert isinstance(seen[-1], BreakerReset)


def test_a_spend_probe_that_spends_too_fast_reopens():
    clock = FakeClock()
    spend = SpendBreaker("r-1", max_rate=10, window_seconds=10, clock=clock)
    spend.record(200)
    clock.advance(10)
    spend.allow()
    spend.record(150)
    assert spend.state == "open"
    assert spend.drain()[-1].reason == "probe spent too fast"  # type: ignore[attr-defined]


def test_the_spend_cap_is_final_until_a_person_resets_it():
    clock = FakeClock()
    spend = SpendBreaker("r-1", cap=100, clock=clock)
    spend.record(60)
    assert spend.state == "closed"
    spend.record(50)
    assert spend.state == "open"
    [tripped] = spend.drain()
    assert isinstance(tripped, BreakerTripped) and tripped.retry_in is None
    assert "over the cap of 100" in tripped.reason
    clock.advance(10_000)
    with pytest.raises(BreakerOpen, match="until reset"):
        spend.allow()
    spend.reset(by="ann", reason="raised the run's budget")
    assert spend.state == "closed"
    [reset] = spend.drain()
    assert isinstance(reset, BreakerReset) and "ann" in reset.reason


def test_a_spend_breaker_needs_a_limit():
    with pytest.raises(ValueError):
        SpendBreaker("r-1")
