"""An agent's span ends where the journal says the agent stopped: at its ReplyOverdue (a silent
reviewer) or at the loop breaker's trip (a looping specialist), with the reason, not at the
agent's next start or at the run's end."""

from __future__ import annotations

from runtime import flight
from runtime.events import BreakerTripped, ReplyOverdue, RunStarted, TeamFinished
from runtime.jsonl import JsonlJournal
from runtime.otel import STATUS_ERROR, nanos, otlp_trace
from tests.runtime.test_otel import attrs, children, spans_of, window


def clock_at(records, event):
    """The trace's clock when it folds `event`: the latest time seen so far (specialists write
    from other threads, so their stream's times interleave with the run's)."""
    at = next(i for i, r in enumerate(records) if r.event is event)
    return max(nanos(r.event.t) for r in records[: at + 1])


def agent_spans(flown, agent):
    records = flight.run_records(JsonlJournal(flown.path), flown.run_id)
    spans = children(spans_of(otlp_trace(records)), "invoke_agent")
    return records, [s for s in spans if attrs(s)["gen_ai.agent.name"] == agent]


def test_a_silent_reviewer_s_span_ends_at_its_reply_overdue(fly_team):
    flown = fly_team("silent-reviewer")
    records, spans = agent_spans(flown, "reviewer")
    overdues = [r.event for r in records if isinstance(r.event, ReplyOverdue)]
    starts = [r.event for r in records if isinstance(r.event, RunStarted)]
    # Asked, overdue; asked once more, overdue again: two runs of the reviewer, two spans.
    assert len(spans) == len([e for e in starts if e.agent == "reviewer"]) == len(overdues) == 2
    for span, overdue in zip(sorted(spans, key=lambda s: window(s)[0]), overdues, strict=True):
        assert window(span)[1] == clock_at(records, overdue)
        assert span["status"] == {"code": STATUS_ERROR, "message": overdue.reason}
        assert attrs(span)["error.type"] == "overdue"
        assert attrs(span)["minutes.agent.outcome"] == "overdue"


def test_a_looping_specialist_s_span_ends_at_the_loop_breaker_s_trip(fly_team):
    flown = fly_team("looping-agent", team="support-triage")
    records, [span] = agent_spans(flown, "kb-worker")
    [trip] = [
        r.event
        for r in records
        if isinstance(r.event, BreakerTripped) and r.event.breaker == "loop:kb-worker"
    ]
    [finished] = [r.event for r in records if isinstance(r.event, TeamFinished)]
    assert window(span)[1] < nanos(finished.t)
    assert window(span)[1] == clock_at(records, trip)
    assert attrs(span)["error.type"] == "looping"
    assert span["status"]["message"] == f"the loop breaker stopped it: {trip.reason}"
    # The tool spans stay inside it: nothing of the agent's ran after the trip.
    tools = [s for s in spans_of(otlp_trace(records)) if s.get("parentSpanId") == span["spanId"]]
    assert tools and all(window(t)[1] <= window(span)[1] for t in tools)
