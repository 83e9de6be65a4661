"""A trace carries what the agents were asked and answered, as the GenAI conventions and
OpenInference read it: bounded, scrubbed of credentials, and left out entirely when a
deployment turns content off."""

from __future__ import annotations

import json

import pytest

from runtime.journal import Recorded
from runtime.otel import TraceOptions, otlp_json, otlp_trace
from runtime.otel.content import scrub
from tests.runtime.test_otel import attrs, children, root_of, spans_of

CONTENT = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "input.value",
    "output.value",
    "minutes.task",
}
SECRETS = ["sk-live0123456789abcdefXYZ", "hunter2-is-my-pass", "ghp_abcdefghijklmnopqrstuvwxyz0123"]


@pytest.fixture
def first(fly_team):
    return fly_team("first-flight")


def test_chat_tool_agent_and_run_spans_carry_their_content(first):
    spans = spans_of(otlp_trace(first.records))
    for chat in children(spans, "chat"):
        seen = attrs(chat)
        asked = json.loads(seen["gen_ai.input.messages"])
        assert asked[0]["role"] == "user" and asked[0]["parts"][0]["type"] == "text"
        [said] = json.loads(seen["gen_ai.output.messages"])
        assert said["role"] == "assistant" and said["finish_reason"] == "tool_calls"
        assert any(p["type"] == "tool_call" for p in said["parts"])
    later = [json.loads(attrs(c)["gen_ai.input.messages"]) for c in children(spans, "chat")]
    assert any(m["role"] == "tool" for window in later for m in window)  # results come back
    tools = children(spans, "execute_tool")
    assert tools and all("gen_ai.tool.call.result" in attrs(t) for t in tools)
    assert any("gen_ai.tool.call.arguments" in attrs(t) for t in tools)
    for agent in children(spans, "invoke_agent"):
        seen = attrs(agent)
        assert seen["input.value"] and seen["output.value"], seen["gen_ai.agent.name"]
    root = attrs(root_of(spans))
    assert root["input.value"] == first.events[0].task and root["output.value"]


def test_content_off_leaves_every_piece_out(first):
    spans = spans_of(otlp_trace(first.records, TraceOptions(content=False)))
    assert len(spans) > 10
    assert not [k for s in spans for k in attrs(s) if k in CONTENT]
    # what is not content stays: the structure, the tokens, the names
    assert all("gen_ai.usage.input_tokens" in attrs(c) for c in children(spans, "chat"))


def test_every_piece_is_bounded_and_the_messages_stay_json(first):
    spans = spans_of(otlp_trace(first.records, TraceOptions(content_chars=20)))
    cut = 0
    for span in spans:
        for key, value in attrs(span).items():
            if key in ("gen_ai.input.messages", "gen_ai.output.messages"):
                for message in json.loads(value):
                    for part in message["parts"]:
                        text = part.get("content") or part.get("arguments") or part.get("response")
                        assert len(text.split("… [")[0]) <= 20
            elif key in CONTENT:
                assert len(value.split("… [")[0]) <= 20
                cut += "characters cut]" in value
    assert cut > 0


def with_secrets(records: list[Recorded]) -> list[Recorded]:
    """The run as if a tool had printed credentials and the task had quoted a password."""
    out = []
    for rec in records:
        e = rec.event
        if e.kind == "ToolReturned" and e.error is None:
            e = e.model_copy(update={"result": {"out": f"OPENAI_API_KEY={SECRETS[0]} ok"}})
        elif e.kind in ("TeamStarted", "RunStarted"):
            e = e.model_copy(update={"task": f"{e.task} (db password: {SECRETS[1]})"})
        elif e.kind == "ModelResponded" and e.text is not None:
            e = e.model_copy(update={"text": f"using token {SECRETS[2]}"})
        out.append(Recorded(rec.stream, rec.version, rec.position, e))
    return out


def test_credentials_never_reach_the_trace(first):
    exported = otlp_json(with_secrets(first.records))
    for secret in SECRETS:
        assert secret not in exported
    assert exported.count("[REDACTED]") >= 3
    # ... also when a bound would cut a credential in half
    short = otlp_json(with_secrets(first.records), TraceOptions(content_chars=30))
    assert not any(secret[:12] in short for secret in SECRETS)


def test_the_scrubber_keeps_what_is_not_a_credential():
    said = "Authorization: Bearer abcdef0123456789 and -----BEGIN RSA PRIVATE KEY-----\nxyz"
    assert scrub(said) == "Authorization: [REDACTED] and [REDACTED]"
    assert scrub('{"password": "pw1234"}') == '{"password": "[REDACTED]"}'
    # counts beside such words are not credentials: a specialist's report says how many tokens
    assert scrub('{"tokens": 120, "max_tokens=4096"}') == '{"tokens": 120, "max_tokens=4096"}'
    assert scrub("2 passed, 0 failed in 0.01s; token budget 300") == (
        "2 passed, 0 failed in 0.01s; token budget 300"
    )
