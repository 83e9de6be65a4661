"""The OTLP export of real runs: the official protobuf definitions accept it, its spans match the
journal one for one, its tokens match the bill, and the same journal exports the same bytes."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from typing import Any

import pytest
from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from runtime import flight, views
from runtime.journal import MemoryJournal, Recorded
from runtime.jsonl import JsonlJournal
from runtime.otel import STATUS_ERROR, STATUS_UNSET, TraceOptions, nanos, otlp_json, otlp_trace
from runtime.stops import StopRequest
from runtime.team import Services
from tests.fakellm import Reply, completion, wire_call

Span = dict[str, Any]


def spans_of(doc: dict[str, Any]) -> list[Span]:
    [resource] = doc["resourceSpans"]
    [scope] = resource["scopeSpans"]
    spans: list[Span] = scope["spans"]
    return spans


def attrs(span: Span) -> dict[str, Any]:
    """Attribute values decoded from their OTLP/JSON wrappers (int64 strings back to ints)."""
    out: dict[str, Any] = {}
    for item in span["attributes"]:
        [(kind, value)] = item["value"].items()
        out[item["key"]] = int(value) if kind == "intValue" else value
    return out


def root_of(spans: list[Span]) -> Span:
    """The run's own span: the one with no parent (written last: spans come as they end)."""
    [root] = [s for s in spans if "parentSpanId" not in s]
    return root


def operation(span: Span) -> str:
    return str(attrs(span)["gen_ai.operation.name"])


def children(spans: list[Span], op: str) -> list[Span]:
    """The spans of an operation, without the run's own span (the one with no parent)."""
    return [s for s in spans if "parentSpanId" in s and operation(s) == op]


def window(span: Span) -> tuple[int, int]:
    return int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])


def as_protobuf(doc: dict[str, Any]) -> ExportTraceServiceRequest:
    """Parse with the official definitions. OTLP/JSON writes ids as hex, while protobuf's own JSON
    mapping reads bytes as base64: convert them first, or a hex id would parse into the wrong
    number of bytes without complaint."""
    doc = json.loads(json.dumps(doc))
    for span in spans_of(doc):
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return Parse(json.dumps(doc), ExportTraceServiceRequest())


def count(records: list[Recorded], kind: str) -> int:
    return sum(1 for r in records if r.event.kind == kind)


@pytest.fixture
def flaky(fly_team):
    return fly_team("flaky-tool")


def test_the_official_definitions_accept_the_export(flaky):
    doc = otlp_trace(flaky.records)
    spans = spans_of(doc)
    for span in spans:
        assert re.fullmatch(r"[0-9a-f]{32}", span["traceId"])
        assert re.fullmatch(r"[0-9a-f]{16}", span["spanId"])
    parsed = as_protobuf(doc)
    [resource] = parsed.resource_spans
    assert resource.resource.attributes[0].value.string_value == "minutes"
    [scope] = resource.scope_spans
    assert len(scope.spans) == len(spans)
    for span in scope.spans:
        assert len(span.trace_id) == 16 and len(span.span_id) == 8
        assert len(span.parent_span_id) in (0, 8)
        assert 0 < span.start_time_unix_nano <= span.end_time_unix_nano
    assert {s.trace_id for s in scope.spans} == {scope.spans[0].trace_id}


@pytest.mark.parametrize("scenario", ["first-flight", "flaky-tool", "reject-loop"])
def test_one_span_per_agent_run_model_call_and_tool_attempt(fly_team, scenario):
    records = fly_team(scenario).records
    spans = spans_of(otlp_trace(records))
    [root] = [s for s in spans if "parentSpanId" not in s]
    assert operation(root) == "invoke_agent"
    assert len(children(spans, "invoke_agent")) == count(records, "RunStarted")
    assert len(children(spans, "chat")) == count(records, "ModelCalled")
    assert count(records, "ModelCalled") == count(records, "ModelResponded")
    # a retried call is one span per attempt, and every attempt is one ToolReturned
    assert len(children(spans, "execute_tool")) == count(records, "ToolReturned")
    assert len(spans) == 1 + count(records, "RunStarted") + count(records, "ModelCalled") + count(
        records, "ToolReturned"
    )
    assert len({s["spanId"] for s in spans}) == len(spans)


def test_the_run_span_names_the_team_scenario_and_task(flaky):
    spans = spans_of(otlp_trace(flaky.records))
    root = attrs(root_of(spans))
    assert root_of(spans)["name"] == "invoke_agent repo-fix"
    assert root["minutes.run_id"] == flaky.run_id
    assert (root["minutes.team"], root["minutes.scenario"]) == ("repo-fix", "flaky-tool")
    assert root["minutes.task"] == flaky.events[0].task
    assert root["minutes.status"] == "done" and root_of(spans)["status"]["code"] == STATUS_UNSET
    assert all(attrs(s)["minutes.run_id"] == flaky.run_id for s in spans)
    messages = [e for e in root_of(spans)["events"] if e["name"] == "minutes.message"]
    assert len(messages) == count(flaky.records, "MessageSent")


def test_tokens_add_up_to_the_bill(fly_team):
    records = fly_team("first-flight").records
    bill = views.bill(records)
    chats = children(spans_of(otlp_trace(records)), "chat")
    assert sum(attrs(s)["minutes.usage.total_tokens"] for s in chats) == bill["total"]["tokens"]
    per_agent: Counter[str] = Counter()
    for span in chats:
        per_agent[attrs(span)["gen_ai.agent.name"]] += attrs(span)["minutes.usage.total_tokens"]
    assert per_agent == {agent: row["tokens"] for agent, row in bill["agents"].items()}
    # the scripted model splits its synthetic total: consumers add input and output up, and
    # get the bill
    split: Counter[str] = Counter()
    for span in chats:
        seen = attrs(span)
        assert seen["gen_ai.usage.input_tokens"] > 0 and seen["gen_ai.usage.output_tokens"] > 0
        split[seen["gen_ai.agent.name"]] += (
            seen["gen_ai.usage.input_tokens"] + seen["gen_ai.usage.output_tokens"]
        )
    assert split == per_agent


def test_scripted_model_calls_are_named_and_say_why_they_stopped(fly_team):
    records = fly_team("first-flight").records
    run_id = records[0].stream.removeprefix("run-")
    spans = spans_of(otlp_trace(records))
    chats = children(spans, "chat")
    for span in chats:
        seen = attrs(span)
        assert span["name"] == "chat scripted" and seen["gen_ai.request.model"] == "scripted"
        assert seen["gen_ai.provider.name"] == "minutes" == seen["gen_ai.system"]
        assert seen["minutes.model.backend"] == "scripted"
        assert seen["gen_ai.response.finish_reasons"] == {"values": [{"stringValue": "tool_calls"}]}
        assert seen["gen_ai.agent.id"] == f"{run_id}/{seen['gen_ai.agent.name']}"
        assert "server.address" not in seen and "gen_ai.response.id" not in seen
    for span in children(spans, "invoke_agent") + children(spans, "execute_tool"):
        seen = attrs(span)
        assert seen["gen_ai.agent.id"] == f"{run_id}/{seen['gen_ai.agent.name']}"


@pytest.mark.parametrize("scenario", ["first-flight", "flaky-tool", "budget-starved"])
def test_every_child_lies_within_its_parent(fly_team, scenario):
    spans = spans_of(otlp_trace(fly_team(scenario).records))
    by_id = {s["spanId"]: s for s in spans}
    for span in spans:
        start, end = window(span)
        assert start <= end
        if "parentSpanId" not in span:
            continue
        parent = by_id[span["parentSpanId"]]
        parent_start, parent_end = window(parent)
        assert parent_start <= start and end <= parent_end, span["name"]
        expected = "invoke_agent" if operation(span) in ("chat", "execute_tool") else None
        if expected:
            assert operation(parent) == expected and "parentSpanId" in parent
        else:
            assert "parentSpanId" not in parent  # agent spans hang under the run's span


def test_a_failed_attempt_is_an_error_span_beside_its_retry(flaky):
    tools = children(spans_of(otlp_trace(flaky.records)), "execute_tool")
    first, second = [s for s in tools if attrs(s)["gen_ai.tool.call.id"] == "coder-1-1"]
    assert first["status"] == {"code": STATUS_ERROR, "message": "pytest exited 137"}
    assert attrs(first)["error.type"] == "ToolExit"
    assert (attrs(first)["minutes.tool.attempt"], attrs(second)["minutes.tool.attempt"]) == (1, 2)
    assert second["status"]["code"] == STATUS_UNSET and "error.type" not in attrs(second)
    assert window(second)[0] == window(first)[1]  # the retry starts where the failure came back
    assert first["name"] == "execute_tool run_tests"
    assert attrs(first)["gen_ai.tool.name"] == "run_tests"
    assert (attrs(first)["minutes.task_id"], attrs(first)["minutes.turn"]) == ("T1", 0)


def test_a_run_that_stops_short_marks_the_run_and_the_agent(fly_team):
    spans = spans_of(otlp_trace(fly_team("budget-starved").records))
    assert root_of(spans)["status"] == {
        "code": STATUS_ERROR,
        "message": "coder ran out of budget on T1 (the run's allowance 400 tokens less 80 kept "
        "for verification, spent 350)",
    }
    [coder] = [
        s for s in children(spans, "invoke_agent") if attrs(s)["gen_ai.agent.name"] == "coder"
    ]
    assert attrs(coder)["error.type"] == "halted" == attrs(coder)["minutes.agent.outcome"]
    assert coder["status"]["message"].startswith("budget exhausted: spent")


def test_a_tool_that_never_came_back_ends_at_the_last_event_in_error(fly_team):
    # What a crash between ToolDispatched and ToolReturned leaves: the journal up to the dispatch
    records = fly_team("first-flight").records
    cut = next(i for i, r in enumerate(records) if r.event.kind == "ToolDispatched")
    crashed = records[: cut + 1]
    spans = spans_of(otlp_trace(crashed))
    [tool] = children(spans, "execute_tool")
    assert tool["status"]["code"] == STATUS_ERROR
    assert "no ToolReturned was recorded for run_tests" in tool["status"]["message"]
    assert "crashed" in tool["status"]["message"]
    assert attrs(tool)["error.type"] == "unfinished"
    last = nanos(crashed[-1].event.t)
    assert window(tool)[1] == window(root_of(spans))[1] == last
    [coder] = [
        s for s in children(spans, "invoke_agent") if attrs(s)["gen_ai.agent.name"] == "coder"
    ]
    assert coder["status"]["code"] == STATUS_ERROR and window(coder)[1] == last
    assert attrs(coder)["minutes.agent.outcome"] == "unfinished"
    assert "minutes.status" not in attrs(root_of(spans))  # the run has no verdict yet
    assert root_of(spans)["status"]["code"] == STATUS_UNSET
    as_protobuf(otlp_trace(crashed))


def test_a_person_s_stop_and_resume_are_events_on_the_run_and_one_agent_span_spans_them(
    tmp_path,
):
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("repo-fix", "first-flight", "r-paused")
    boundaries = iter(range(100))

    def stop() -> StopRequest | None:  # stop at the coder's second turn
        return StopRequest("alice", "wrong branch") if next(boundaries) == 2 else None

    assert flight.fly(journal, config, "r-paused", tmp_path, stop=stop).status == "interrupted"
    spans = spans_of(otlp_trace(journal.read("run-r-paused")))
    [open_run] = [s for s in spans if s["status"]["code"] == STATUS_ERROR]
    assert attrs(open_run)["gen_ai.agent.name"] == "coder"
    assert open_run["status"]["message"] == "the run was interrupted by alice: wrong branch"

    assert flight.resume(journal, "r-paused", tmp_path, by="bob").status == "done"
    records = journal.read("run-r-paused")
    spans = spans_of(otlp_trace(records))
    assert [e["name"] for e in root_of(spans)["events"] if e["name"] != "minutes.message"] == [
        "minutes.interrupted",
        "minutes.resumed",
    ]
    agents = children(spans, "invoke_agent")
    assert len(agents) == count(records, "RunStarted")
    assert all(s["status"]["code"] == STATUS_UNSET for s in spans)


def test_the_same_journal_exports_the_same_bytes_from_any_store(flaky):
    again = JsonlJournal(flaky.path).read(f"run-{flaky.run_id}")
    assert otlp_json(flaky.records) == otlp_json(again)
    copy = MemoryJournal()
    copy.append(f"run-{flaky.run_id}", [r.event for r in flaky.records], 0)
    assert otlp_json(copy.read_all()) == otlp_json(flaky.records)
    assert json.loads(otlp_json(flaky.records)) == otlp_trace(flaky.records)


def test_other_streams_and_an_empty_journal(flaky):
    assert otlp_trace([]) == {"resourceSpans": []}
    foreign = Recorded("control-x", 1, 0, flaky.records[0].event)
    assert otlp_json([foreign, *flaky.records]) == otlp_json(flaky.records)


def test_a_model_on_an_endpoint_reports_its_name_and_token_split(server, tmp_path):
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "local-test-model"}
    verdict = {"verdict": "accept", "reasons": "minimal guard; 2 passed, 0 failed"}
    usage = {"prompt_tokens": 400, "completion_tokens": 30, "total_tokens": 430}
    server.queue(Reply(completion(None, [wire_call("done", json.dumps(verdict))], usage)))
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan(
        "repo-fix",
        "first-flight",
        "r-otel",
        models={"reviewer": "openai"},
        model_name="local-test-model",
    )
    endpoint = Services(models=models)
    assert flight.fly(journal, config, "r-otel", tmp_path, services=endpoint).status == "done"

    chats = children(spans_of(otlp_trace(journal.read("run-r-otel"))), "chat")
    [reviewer] = [s for s in chats if attrs(s)["gen_ai.agent.name"] == "reviewer"]
    assert reviewer["name"] == "chat local-test-model" and reviewer["kind"] == 3  # CLIENT
    seen = attrs(reviewer)
    assert seen["gen_ai.request.model"] == "local-test-model"
    # the provider as the conventions name it: the endpoint speaks OpenAI's protocol
    assert seen["gen_ai.provider.name"] == "openai" == seen["gen_ai.system"]
    assert seen["minutes.model.backend"] == "endpoint"  # journals before it was named said "openai"
    assert (seen["gen_ai.usage.input_tokens"], seen["gen_ai.usage.output_tokens"]) == (400, 30)
    assert seen["minutes.usage.total_tokens"] == 430
    host, port = server.url.split("//")[1].split("/")[0].split(":")
    assert (seen["server.address"], seen["server.port"]) == (host, int(port))
    assert seen["gen_ai.response.id"] == "chatcmpl-1"
    assert seen["gen_ai.response.finish_reasons"] == {"values": [{"stringValue": "stop"}]}
    scripted = [attrs(s) for s in chats if s is not reviewer]
    assert all(a["gen_ai.provider.name"] == "minutes" for a in scripted)
    assert all(a["gen_ai.request.model"] == "scripted" for a in scripted)


@pytest.mark.parametrize("scenario", ["first-flight", "flaky-tool", "budget-starved"])
def test_the_json_text_is_the_compact_dump_of_the_export(fly_team, scenario):
    records = fly_team(scenario).records
    for options in (None, TraceOptions(content_chars=20)):  # cut content carries "…"
        text = otlp_json(records, options)
        doc = otlp_trace(records, options)
        assert text == json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
