"""A run's trace groups its spans as one session under a configurable project, and shows what
the journal says failed: a specialist that reported failure, and a DEGRADED answer, are errors."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.jsonl import JsonlJournal
from runtime.otel import STATUS_ERROR, STATUS_UNSET, TraceOptions, otlp_trace
from tests.runtime.test_otel import attrs, children, root_of, spans_of

POLICY, KB, ORDERS = "policy-worker", "kb-worker", "orders-worker"


@pytest.fixture
def broken(fly_team):
    return fly_team("broken-policy", team="support-triage")


def trace_of(flown, options=None):
    return otlp_trace(flight.run_records(JsonlJournal(flown.path), flown.run_id), options)


def resource_of(doc):
    [resource] = doc["resourceSpans"]
    return {a["key"]: a["value"]["stringValue"] for a in resource["resource"]["attributes"]}


def test_every_span_carries_the_run_id_as_its_conversation(broken):
    spans = spans_of(trace_of(broken))
    assert len(spans) > 10
    for span in spans:
        seen = attrs(span)
        assert seen["gen_ai.conversation.id"] == broken.run_id == seen["session.id"]


def test_the_project_names_the_service_and_defaults_to_minutes(broken):
    assert resource_of(trace_of(broken)) == {
        "service.name": "minutes",
        "openinference.project.name": "minutes",
    }
    chosen = resource_of(trace_of(broken, TraceOptions(project="support-prod")))
    assert chosen == {"service.name": "support-prod", "openinference.project.name": "support-prod"}


def test_a_blank_project_is_refused():
    with pytest.raises(ValueError, match="project name is blank"):
        TraceOptions(project=" ")
    with pytest.raises(ValueError, match="content_chars must be at least 1"):
        TraceOptions(content_chars=0)


def test_a_specialist_that_failed_and_a_degraded_answer_are_errors(broken):
    spans = spans_of(trace_of(broken))
    agents = {attrs(s)["gen_ai.agent.name"]: s for s in children(spans, "invoke_agent")}
    policy = agents[POLICY]
    assert policy["status"]["code"] == STATUS_ERROR
    assert policy["status"]["message"] == (
        "the agent reported failure: the policy service refused every call"
    )
    assert attrs(policy)["error.type"] == "tool_error"
    assert attrs(policy)["minutes.agent.outcome"] == "failed"
    for fine in (ORDERS, KB):
        assert agents[fine]["status"]["code"] == STATUS_UNSET, fine
        assert "error.type" not in attrs(agents[fine])
    root = root_of(spans)
    assert "parentSpanId" not in root and attrs(root)["minutes.status"] == "done"
    assert root["status"]["code"] == STATUS_ERROR
    assert root["status"]["message"].startswith("answered, DEGRADED: the policy service refused")
    assert attrs(root)["error.type"] == "degraded"


def test_a_run_that_answered_in_full_stays_unset(fly_team):
    flown = fly_team("first-flight")
    spans = spans_of(trace_of(flown))
    assert all(s["status"]["code"] == STATUS_UNSET for s in children(spans, "invoke_agent"))
    assert root_of(spans)["status"]["code"] == STATUS_UNSET
