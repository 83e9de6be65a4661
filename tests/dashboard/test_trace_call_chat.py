"""A call opened from the trace: a model call as a chat (what the model was asked, what it
answered, tokens, latency), a tool call's arguments and result; the same content as the OTLP
export's span, escaped; the timeline's model-call rows lead to it."""

from __future__ import annotations

import io
import json

import pytest

from dashboard import trace
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.transfer import import_journal
from runtime import flight, trace_view
from runtime.events import ModelCalled, ToolReturned
from runtime.otel import otlp_trace
from runtime.otel.spans import span_id_of
from tests.dashboard.conftest import run_of
from tests.dashboard.test_escaping import hostile_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def export_spans(run_id: str) -> dict[str, dict]:
    doc = otlp_trace(flight.run_records(DjangoJournal(), run_id))
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return {
        s["spanId"]: {a["key"]: next(iter(a["value"].values())) for a in s["attributes"]}
        for s in spans
    }


def test_every_call_of_a_first_flight_reads_as_its_exported_span_says(owner):
    run_id = run_of("first-flight")
    spans = export_spans(run_id)
    records = flight.run_records(DjangoJournal(), run_id)
    opened = [r for r in records if isinstance(r.event, ModelCalled | ToolReturned)]
    assert len(opened) == 16
    for rec in opened:
        found = trace.call(run_id, rec.position)
        assert found is not None
        role = "chat" if isinstance(rec.event, ModelCalled) else "tool"
        span = spans[span_id_of(run_id, rec, role)]
        if role == "chat":
            assert found.prompt == trace_view.messages(span["gen_ai.input.messages"])
            assert found.answer == trace_view.messages(span["gen_ai.output.messages"])
            assert found.prompt[0].role == "user" and found.answer[0].role == "assistant"
        else:
            assert found.arguments == trace_view.pretty(span["gen_ai.tool.call.arguments"])
            assert found.result == trace_view.pretty(span["gen_ai.tool.call.result"])
    assert trace.call(run_id, records[0].position) is None  # TeamStarted opens no call


def test_a_call_the_journal_did_not_open_starts_where_the_export_starts_it(owner):
    """A reference journal has no ModelCalled: a call starts at the agent's event before its
    answer, whatever that event's kind (here a delivery, after the agent started)."""
    lines = [
        {
            "kind": "TeamStarted",
            "t": 100.0,
            "team": "repo-fix",
            "scenario": "s",
            "task": "t",
            "config": {},
        },
        {"kind": "RunStarted", "t": 101.0, "agent": "coder", "task": "fix it"},
        {"kind": "MessageDelivered", "t": 105.0, "agent": "coder", "recipient": "coder"},
        {
            "kind": "ModelResponded",
            "v": 2,
            "t": 107.5,
            "agent": "coder",
            "text": "done",
            "tool_calls": [],
            "usage": {"total": 5},
        },
    ]
    text = "".join(json.dumps({"run_id": "r-ref", **line}) + "\n" for line in lines).encode()
    import_journal(io.BytesIO(text))
    projection.catch_up()
    records = flight.run_records(DjangoJournal(), "r-ref")
    answered = records[-1]
    found = trace.call("r-ref", answered.position)
    doc = otlp_trace(records)
    span = next(
        s
        for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        if s["spanId"] == span_id_of("r-ref", answered, "chat")
    )
    assert found is not None and found.latency_ms == 2500.0
    assert (str(found.start), str(found.end)) == (
        span["startTimeUnixNano"],
        span["endTimeUnixNano"],
    )


def test_a_model_call_opens_as_a_chat_below_the_trace(as_owner):
    run_id = run_of("first-flight")
    records = flight.run_records(DjangoJournal(), run_id)
    asked = next(
        r for r in records if isinstance(r.event, ModelCalled) and r.event.agent == "coder"
    )
    page = as_owner.get(f"/runs/{run_id}/?tab=trace&call={asked.position}")
    html = page.content.decode()
    assert page.status_code == 200 and 'id="call"' in html
    assert "What the model was asked" in html and "What it answered" in html
    task = next(
        r.event.task for r in records if r.event.kind == "RunStarted" and r.event.agent == "coder"
    )
    assert task.split("\n")[0][:40] in html  # the coder's task opens the prompt
    call = page.context["call"]
    facts = dict(call.facts())
    assert facts["turn"] == "0" and int(facts["tokens"]) > 0
    assert page.context["call_latency"].endswith(("ms", "s"))
    assert '<span class="role badge">assistant</span>' in html


def test_a_tool_call_shows_its_arguments_and_result_pretty_printed(as_owner):
    run_id = run_of("first-flight")
    records = flight.run_records(DjangoJournal(), run_id)
    returned = next(
        r for r in records if isinstance(r.event, ToolReturned) and r.event.tool != "run_tests"
    )
    page = as_owner.get(f"/runs/{run_id}/?tab=trace&call={returned.position}")
    call = page.context["call"]
    assert call.kind == "tool" and call.arguments.startswith('{\n  "')  # indented JSON
    html = page.content.decode()
    assert "<h3>Arguments</h3>" in html and "<h3>Result</h3>" in html


def test_a_hostile_answer_in_a_call_is_shown_as_text(as_owner):
    run_id = hostile_run()
    answered = next(
        r for r in DjangoJournal().read(f"run-{run_id}") if r.event.kind == "ModelResponded"
    )
    page = as_owner.get(f"/runs/{run_id}/?tab=trace&call={answered.position}")
    html = page.content.decode()
    call_html = html[html.index('id="call"') :]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in call_html
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert call_html.split(">", 1)[0].endswith("hx-disable")  # htmx reads nothing inside


def test_an_unknown_call_says_so_and_a_call_of_another_run_is_not_shown(as_owner):
    run_id = run_of("first-flight")
    other = hostile_run()
    foreign = DjangoJournal().read(f"run-{other}")[-1].position
    for position in (999_999, foreign):
        page = as_owner.get(f"/runs/{run_id}/?tab=trace&call={position}")
        assert page.status_code == 200 and page.context["call"] is None
        assert (
            f"No model or tool call of this run opens at position {position}"
            in page.content.decode()
        )


def test_the_timelines_model_call_rows_link_to_their_call(as_owner):
    run_id = run_of("first-flight")
    page = as_owner.get(f"/runs/{run_id}/?tab=timeline&kind=ModelCalled").content.decode()
    records = flight.run_records(DjangoJournal(), run_id)
    for rec in records:
        if isinstance(rec.event, ModelCalled):
            assert f"?tab=trace&amp;call={rec.position}#call" in page
    assert page.count("the prompt and the answer →") == 10
