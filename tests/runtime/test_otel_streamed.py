"""The trace is written as its spans become final, holding none of them: the streamed JSON and
protobuf are the same bytes as the whole request, and the spans final after any prefix of the
journal are the first spans of the whole journal's trace, unchanged (what a live push relies on
to send each span once)."""

from __future__ import annotations

import json

import pytest

from runtime import flight
from runtime.jsonl import JsonlJournal
from runtime.otel import otlp_json, otlp_protobuf, otlp_request, otlp_trace
from runtime.otel.encode import CHUNK_SPANS, folded, otlp_json_chunks
from runtime.otel.text import span_text

SCENARIOS = [("repo-fix", "flaky-tool"), ("support-triage", "broken-policy")]


@pytest.fixture(params=SCENARIOS, ids=[s for _, s in SCENARIOS])
def records(request, fly_team):
    team, scenario = request.param
    flown = fly_team(scenario, team=team)
    return flight.run_records(JsonlJournal(flown.path), flown.run_id)


def texts(records, finish=True):
    return [span_text(span, trace.trace_id) for trace, span in folded(records, finish=finish)]


def test_the_spans_final_after_any_prefix_are_the_whole_trace_s_first_spans_unchanged(records):
    whole = texts(records)
    assert len(whole) == len(otlp_trace(records)["resourceSpans"][0]["scopeSpans"][0]["spans"])
    sent = 0
    for end in range(1, len(records) + 1):
        live = texts(records[:end], finish=False)
        assert live == whole[: len(live)], f"after {end} records"
        assert len(live) >= sent  # never fewer: a span once final stays so
        sent = len(live)
    assert sent < len(whole)  # the run's own span waits for the journal's end


def test_a_specialist_s_span_waits_for_its_supervisor_s_report(fly_team):
    flown = fly_team("broken-policy", team="support-triage")
    records = flight.run_records(JsonlJournal(flown.path), flown.run_id)
    reported = next(i for i, r in enumerate(records) if r.event.kind == "WorkerReported")
    report = records[reported].event.report
    worker = report["worker_id"]
    before = [s.name for _, s in folded(records[:reported], finish=False)]
    after = [s.name for _, s in folded(records[: reported + 1], finish=False)]
    assert f"invoke_agent {worker}" not in before
    assert f"invoke_agent {worker}" in after


def test_streamed_json_and_protobuf_are_the_whole_request_s_bytes(records):
    chunks = list(otlp_json_chunks(records))
    assert "".join(chunks) == otlp_json(records)
    assert otlp_json(records) == json.dumps(
        otlp_trace(records), separators=(",", ":"), ensure_ascii=False
    )
    spans = len(texts(records))
    assert len(chunks) == spans // CHUNK_SPANS + 1
    assert otlp_protobuf(records) == otlp_request(records).SerializeToString(deterministic=True)


def test_no_run_gives_an_empty_request_either_way():
    assert otlp_json([]) == '{"resourceSpans":[]}'
    assert otlp_protobuf([]) == b"" == otlp_request([]).SerializeToString()
