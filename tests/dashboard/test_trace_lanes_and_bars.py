"""The trace tab of a first flight: a lane per agent, a bar per model call and per tool call,
each bar the OTLP export's span (same start, same end, same status)."""

from __future__ import annotations

import re

import pytest

from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.otel import otlp_trace
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


def spans_of(run_id: str) -> list[dict]:
    doc = otlp_trace(flight.run_records(DjangoJournal(), run_id))
    return doc["resourceSpans"][0]["scopeSpans"][0]["spans"]


def test_a_first_flight_shows_a_lane_per_agent_and_the_exports_calls_as_bars(as_owner):
    run_id = run_of("first-flight")
    page = as_owner.get(f"/runs/{run_id}/?tab=trace")
    assert page.status_code == 200
    html = page.content.decode()
    assert (
        'id="tab-trace"' in html and '<svg xmlns="http://www.w3.org/2000/svg" class="trace"' in html
    )
    lanes = re.findall(r'class="trace-lane" data-lane="([^"]+)"', html)
    assert lanes == ["run", "coder", "operator", "orchestrator", "reviewer", "tester"]

    bars = page.context["drawing"]["bars"]
    calls = [s for s in spans_of(run_id) if s["name"].split()[0] in ("chat", "execute_tool")]
    assert len(calls) == 16  # ten model calls, six tool calls
    assert sorted(b["span_id"] for b in bars) == sorted(s["spanId"] for s in calls)
    view = page.context["window"].view(run_id, [], False)
    by_id = {b.span_id: b for b in view.bars}
    for span in calls:
        bar = by_id[span["spanId"]]
        assert (str(bar.start), str(bar.end)) == (
            span["startTimeUnixNano"],
            span["endTimeUnixNano"],
        )
        assert (bar.error is None) == (span["status"]["code"] == 0)
        agent = next(
            a["value"]["stringValue"] for a in span["attributes"] if a["key"] == "gen_ai.agent.name"
        )
        assert bar.lane == agent
    assert sum(b["kind"] == "chat" for b in bars) == 10
    # Every bar is a link with a label a screen reader reads, to its call.
    links = re.findall(
        r'<a href="([^"]+)" class="trace-bar (chat|tool) ok" aria-label="([^"]+)"', html
    )
    assert len(links) == 16
    assert all(re.search(r"&amp;call=\d+#call$", href) for href, _, _ in links)
    assert any(label.startswith("coder model call, turn 1, at +") for _, _, label in links)
