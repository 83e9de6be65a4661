"""OpenAIClient against a real local HTTP server that speaks the chat-completions protocol.

The server answers from a per-test queue of canned replies and records every request, so the
tests check both directions of the translation and the retry policy over real sockets.
"""

from __future__ import annotations

import json
import random
import socket
from typing import Any

import pytest

from runtime.model import UNREADABLE_ARGS, ChatMessage, EndpointDown, ToolCall
from runtime.openai_client import (
    MAX_REPLY_BYTES,
    ModelHTTPError,
    ModelProtocolError,
    OpenAIClient,
)
from runtime.openai_key import REDACTED
from runtime.openai_settings import ModelConfigError
from runtime.tools import InvalidArguments, Tool, Toolbox
from tests.fakellm import FakeServer, Reply, completion, wire_call

WEATHER_TOOL = {
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


class RecordingSleep:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def client_for(server: FakeServer, **options: Any) -> tuple[OpenAIClient, RecordingSleep]:
    sleep = RecordingSleep()
    options.setdefault("rng", random.Random(7))
    client = OpenAIClient(server.url, "test-model", sleep=sleep, **options)
    return client, sleep


USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}


# --- translation -------------------------------------------------------------------------------


def test_a_tool_call_round_trip_translates_both_ways(server: FakeServer) -> None:
    client, _ = client_for(server)
    server.queue(
        Reply(completion(None, [wire_call("weather", '{"city": "Oslo"}')], USAGE)),
        Reply(completion("It is raining in Oslo.", usage=USAGE)),
    )
    window = [
        ChatMessage(role="system", content="You are terse."),
        ChatMessage(role="user", content="Weather in Oslo?"),
    ]

    first = client.complete(window, [WEATHER_TOOL])

    assert first.text == ""
    assert first.tool_calls == [ToolCall(id="call_abc", name="weather", args={"city": "Oslo"})]

    window += [
        ChatMessage(role="assistant", tool_calls=first.tool_calls),
        ChatMessage(role="tool", tool_call_id="call_abc", content='{"sky": "rain"}'),
    ]
    second = client.complete(window, [WEATHER_TOOL])

    assert second.text == "It is raining in Oslo."
    assert second.tool_calls == []
    sent = server.last
    assert server.requests[-1].path == "/v1/chat/completions"
    assert sent["model"] == "test-model"
    assert sent["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": '{"sky": "rain"}'},
    ]
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": "The weather in a city.",
                "parameters": WEATHER_TOOL["parameters"],
            },
        }
    ]


def test_a_request_without_tools_has_no_tools_key_and_options_are_sent_only_when_set(
    server: FakeServer,
) -> None:
    plain, _ = client_for(server)
    tuned, _ = client_for(server, temperature=0.0, tool_choice="auto", max_tokens=300)
    server.queue(Reply(completion("hi", usage=USAGE)), Reply(completion("hi", usage=USAGE)))

    plain.complete([ChatMessage(role="user", content="hello")], [])
    tuned.complete([ChatMessage(role="user", content="hello")], [WEATHER_TOOL])

    first, second = (r.body for r in server.requests)
    assert "tools" not in first
    assert "tool_choice" not in first
    assert "temperature" not in first
    assert "max_tokens" not in first
    assert second["tool_choice"] == "auto"
    assert second["temperature"] == 0.0
    assert second["max_tokens"] == 300


def test_a_tool_call_without_an_id_gets_one_numbered_by_position(server: FakeServer) -> None:
    client, _ = client_for(server)
    calls = [wire_call("weather", '{"city": "Oslo"}', None), wire_call("weather", "", None)]
    server.queue(Reply(completion("checking", calls, USAGE)))

    response = client.complete([ChatMessage(role="user", content="?")], [WEATHER_TOOL])

    assert response.text == "checking"
    assert [(c.id, c.args) for c in response.tool_calls] == [
        ("call_0", {"city": "Oslo"}),
        ("call_1", {}),
    ]


# --- usage -------------------------------------------------------------------------------------


def test_usage_is_taken_from_the_server_when_it_reports_it(server: FakeServer) -> None:
    client, _ = client_for(server)
    server.queue(Reply(completion("ok", usage=USAGE)))

    response = client.complete([ChatMessage(role="user", content="hello")], [])

    assert (response.usage.total, response.usage.prompt, response.usage.completion) == (17, 12, 5)


@pytest.mark.parametrize(
    "usage",
    [
        None,
        {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        {"prompt_tokens": -3, "completion_tokens": 0.5, "total_tokens": "17"},
    ],
    ids=["omitted", "zeros", "not-counts"],
)
def test_usage_is_estimated_and_non_zero_when_the_server_does_not_report_it(
    server: FakeServer, usage: dict[str, Any] | None
) -> None:
    client, _ = client_for(server)
    server.queue(Reply(completion("four score and seven years ago", usage=usage)))

    response = client.complete([ChatMessage(role="user", content="x" * 40)], [])

    assert response.usage.prompt is not None and response.usage.prompt >= 10
    assert response.usage.completion is not None and response.usage.completion >= 1
    assert response.usage.total == response.usage.prompt + response.usage.completion


# --- retries -----------------------------------------------------------------------------------


def test_a_429_is_retried_once_after_the_retry_after_delay(server: FakeServer) -> None:
    client, sleep = client_for(server)
    server.queue(
        Reply({"error": {"message": "slow down"}}, 429, {"Retry-After": "3"}),
        Reply(completion("done", usage=USAGE)),
    )

    response = client.complete([ChatMessage(role="user", content="hello")], [])

    assert response.text == "done"
    assert len(server.requests) == 2
    assert sleep.calls == [3.0]


def test_a_retry_after_longer_than_the_client_waits_gives_up_at_once_and_says_so(
    server: FakeServer,
) -> None:
    # Coming back after 5 s when the server asked for 120 only earns another 429: the retries
    # would all be spent before the server would take us again.
    client, sleep = client_for(server, max_backoff=5.0)
    server.queue(
        Reply(b"busy", 429, {"Retry-After": "120"}), Reply(completion("done", usage=USAGE))
    )

    with pytest.raises(EndpointDown) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert sleep.calls == []
    assert len(server.requests) == 1
    assert caught.value.status == 429 and caught.value.attempts == 1
    assert caught.value.retry_after == 120  # the step that drives the run waits for it
    assert "asked to wait 120 s (Retry-After), longer than this client waits (5 s)" in str(
        caught.value
    )


class Clock:
    """time.time for a client, moved on by its sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_no_retry_waits_past_the_runs_ceiling(server: FakeServer) -> None:
    clock = Clock()
    client = OpenAIClient(server.url, "test-model", sleep=clock.sleep, clock=clock)
    client.give_up_at(clock.now + 10)
    server.queue(*[Reply(b"busy", 503, {"Retry-After": "4"}) for _ in range(5)])

    with pytest.raises(ModelHTTPError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    # 0 s, 4 s, 8 s; a try at 12 s would come after the ceiling at 10 s
    assert len(server.requests) == 3
    assert caught.value.attempts == 3
    assert "the run's wall-clock ceiling falls before the next try" in str(caught.value)


def test_a_slow_server_is_waited_for_only_until_the_runs_ceiling(server: FakeServer) -> None:
    clock = Clock()
    client = OpenAIClient(
        server.url, "test-model", timeout=60, max_retries=0, sleep=clock.sleep, clock=clock
    )
    client.give_up_at(clock.now + 0.2)
    server.queue(Reply(completion("too late", usage=USAGE), stall=5.0))

    with pytest.raises(ModelHTTPError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert "a timeout (no answer within 0.2 s)" in str(caught.value)
    # the run's ceiling, not the model's timeout, ran out: the reason says so
    assert "the run's wall-clock ceiling left 0.2 s for the last try (of 60 s)" in str(caught.value)


def test_a_5xx_that_persists_is_an_outage_after_max_retries_plus_one_attempts(
    server: FakeServer,
) -> None:
    client, sleep = client_for(server, max_retries=3, backoff=0.5, max_backoff=20.0)
    server.queue(*[Reply(b"internal error", 500) for _ in range(4)])

    # Not a ModelError: no agent loop journals it as the model's failure, no harness ends the
    # run over it (services/steps.py parks the run).
    with pytest.raises(EndpointDown) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert len(server.requests) == 4
    assert caught.value.status == 500
    assert caught.value.attempts == 4
    assert "4 attempts" in str(caught.value)
    assert "HTTP 500" in str(caught.value)
    # Full jitter: each wait is somewhere in [0, backoff * 2**attempt].
    assert len(sleep.calls) == 3
    for attempt, seconds in enumerate(sleep.calls):
        assert 0 <= seconds <= 0.5 * 2**attempt


def test_a_400_fails_at_once_without_a_retry(server: FakeServer) -> None:
    client, sleep = client_for(server)
    server.queue(Reply({"error": {"message": "model 'nope' not found"}}, 400))

    with pytest.raises(ModelHTTPError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert len(server.requests) == 1
    assert sleep.calls == []
    assert caught.value.status == 400
    assert "HTTP 400" in str(caught.value)
    assert "model 'nope' not found" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "key", "hint"),
    [
        (401, "sk-wrong-key-000", "the API key was not accepted: check MINUTES_MODEL_API_KEY"),
        (403, "sk-wrong-key-000", "the API key was not accepted: check MINUTES_MODEL_API_KEY"),
        (401, None, "no API key was sent: set MINUTES_MODEL_API_KEY"),
        (404, None, "check the model name 'test-model', MINUTES_MODEL, and that the base URL"),
    ],
)
def test_a_refusal_a_setting_causes_names_the_setting_before_the_servers_words(
    server: FakeServer, status: int, key: str | None, hint: str
) -> None:
    # Vendors word these their own way, and a wrong base URL gets a bare "Not Found".
    client, _ = client_for(server, api_key=key)
    server.queue(Reply(b"Not Found", status))

    with pytest.raises(ModelHTTPError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    message = str(caught.value)
    assert f"HTTP {status} (" in message and hint in message
    assert message.endswith("): Not Found")


def test_a_server_that_does_not_answer_in_time_is_a_timeout_error(server: FakeServer) -> None:
    client, _ = client_for(server, timeout=0.2, max_retries=0)
    server.queue(Reply(completion("too late", usage=USAGE), stall=2.0))

    with pytest.raises(EndpointDown) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert "timeout" in str(caught.value)
    assert caught.value.status is None


def test_a_refused_connection_is_retried_then_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleep = RecordingSleep()
    client = OpenAIClient(f"http://127.0.0.1:{port}", "m", max_retries=2, sleep=sleep)

    with pytest.raises(EndpointDown, match="connection error") as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert caught.value.attempts == 3
    assert len(sleep.calls) == 2


# --- malformed replies -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        (b"Bad Gateway", "not JSON"),  # a page would be a gateway's: tried again
        (b"[1, 2]", "not a JSON object"),
        ({"object": "chat.completion"}, "has no 'choices'"),
        ({"choices": []}, "'choices' is empty"),
        ({"choices": "yes"}, "not a list"),
        ({"choices": [{"index": 0}]}, "has no 'message'"),
        ({"choices": [{"message": {"content": 42}}]}, "content is int"),
        (completion(None, [{"id": "c", "function": {"arguments": "{}"}}]), "no function name"),
        # JSON, but Python reads no whole number this long: said so, not "not JSON".
        (
            b'{"choices": [], "n": ' + b"7" * 5_000 + b"}",
            "not JSON we can read (a whole number longer than 4,300 digits in it)",
        ),
    ],
    ids=[
        "not-json",
        "json-array",
        "no-choices",
        "empty-choices",
        "choices-not-list",
        "no-message",
        "content-not-text",
        "call-without-name",
        "number-too-long",
    ],
)
def test_a_malformed_reply_is_a_protocol_error_that_says_what_is_wrong(
    server: FakeServer, body: dict[str, Any] | bytes, phrase: str
) -> None:
    client, sleep = client_for(server)
    server.queue(Reply(body))

    with pytest.raises(ModelProtocolError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [WEATHER_TOOL])

    assert phrase in str(caught.value)
    assert sleep.calls == []


def test_a_reply_of_megabytes_is_refused_unread_with_what_caps_it(server: FakeServer) -> None:
    # Recorded, it would be a journal line the run's own export could not import again.
    client, _ = client_for(server)
    server.queue(Reply(completion("A" * (MAX_REPLY_BYTES + 10), usage=USAGE)))

    with pytest.raises(ModelProtocolError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    message = str(caught.value)
    assert "the reply is larger than 1024 KiB" in message
    assert "MINUTES_MODEL_MAX_TOKENS" in message
    assert len(message) < 1000


def test_an_unusable_reply_names_the_endpoint_and_the_model_it_came_from(
    server: FakeServer,
) -> None:
    # An agent may be on a model of its own (a fork's coder=endpoint:NAME): whose reply it was
    # is the first thing to know.
    client, _ = client_for(server)
    server.queue(Reply({"id": "x", "choices": []}))

    with pytest.raises(ModelProtocolError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert str(caught.value) == (
        f"POST {server.url}/chat/completions (model 'test-model'): the reply's 'choices' is empty"
    )


def cut(arguments: str) -> dict[str, Any]:
    """A reply whose tool call the server stopped writing at its completion limit."""
    body = completion(None, [wire_call("weather", arguments)])
    body["choices"][0]["finish_reason"] = "length"
    return body


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ("{city: Oslo", "not valid JSON (Expecting property name enclosed in double quotes"),
        ("[1]", "not a JSON object but list: [1]"),
        (7, "int, not a JSON string: 7"),
        # Kept as sent, they were an event the pages could not read back, and every page of
        # the dashboard answered 500 from then on.
        ('{"a": ' + "[" * 60 + "]" * 60 + "}", "nested deeper than 60 levels: "),
        ({"a": json.loads("[" * 300 + "]" * 300)}, "nested deeper than 60 levels: "),
        ('{"a": ' + "[" * 5_000 + "]" * 5_000 + "}", "nested too deeply for JSON to read: "),
        ('{"a": NaN}', "not valid JSON (NaN is not a number JSON allows)"),
        ('{"a": ' + "7" * 5_000 + "}", "not JSON we can read (a whole number longer than 4,300"),
    ],
    ids=[
        "not-json",
        "not-an-object",
        "not-a-string",
        "too-deep",
        "too-deep-object",
        "deepest",
        "nan",
        "number-too-long",
    ],
)
def test_a_call_whose_arguments_are_not_a_json_object_comes_back_kept_for_the_model(
    server: FakeServer, arguments: Any, said: str
) -> None:
    """A small model's malformed call is not the endpoint's failure: the call is kept with what
    was sent, for the toolbox to refuse back to the model (which may send it again), where the
    whole model call used to fail and end the run."""
    client, sleep = client_for(server)
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": arguments}}
    server.queue(Reply(completion(None, [call, wire_call("weather", '{"city": "Oslo"}', "c2")])))

    answer = client.complete([ChatMessage(role="user", content="hello")], [WEATHER_TOOL])

    kept, fine = answer.tool_calls
    assert (kept.id, kept.name, fine.args) == ("c1", "weather", {"city": "Oslo"})
    assert list(kept.args) == [UNREADABLE_ARGS] and kept.args[UNREADABLE_ARGS].startswith(said)
    with pytest.raises(InvalidArguments, match="send the call again with its arguments as one"):
        Toolbox([Tool("weather", "", WEATHER_TOOL["parameters"], lambda city: city)]).check(
            kept, "coder"
        )
    assert sleep.calls == []


def test_a_tool_call_cut_off_at_the_completion_limit_names_the_setting(
    server: FakeServer,
) -> None:
    capped, sleep = client_for(server, max_tokens=8)
    uncapped, _ = client_for(server)
    server.queue(Reply(cut('{"city": "Os')), Reply(cut('{"city": "Os')))

    with pytest.raises(ModelProtocolError) as caught:
        capped.complete([ChatMessage(role="user", content="hello")], [WEATHER_TOOL])
    with pytest.raises(ModelProtocolError) as unset:
        uncapped.complete([ChatMessage(role="user", content="hello")], [WEATHER_TOOL])

    message = str(caught.value)
    assert "'weather'" in message and "not valid JSON" in message
    assert "cut off at the limit of 8 tokens (MINUTES_MODEL_MAX_TOKENS)" in message
    assert "the server's own limit (set MINUTES_MODEL_MAX_TOKENS" in str(unset.value)
    assert sleep.calls == []  # the same request would be cut the same way: no retry


def test_a_reply_cut_off_whole_is_kept_and_a_bad_call_not_cut_says_nothing_of_limits(
    server: FakeServer,
) -> None:
    client, _ = client_for(server, max_tokens=8)
    text = completion("It is rain", usage=USAGE)
    text["choices"][0]["finish_reason"] = "length"
    server.queue(Reply(text), Reply(completion(None, [wire_call("weather", "{oops")])))

    assert client.complete([ChatMessage(role="user", content="hi")], []).text == "It is rain"
    # not cut off: the model wrote it wrong, and the call is kept for the toolbox to refuse
    [kept] = client.complete([ChatMessage(role="user", content="hello")], [WEATHER_TOOL]).tool_calls
    assert "not valid JSON" in kept.args[UNREADABLE_ARGS]
    assert "MINUTES_MODEL_MAX_TOKENS" not in kept.args[UNREADABLE_ARGS]


@pytest.mark.parametrize("bad", [0, -5, True])
def test_a_completion_limit_must_be_a_positive_number(bad: int) -> None:
    with pytest.raises(ModelConfigError, match="max_tokens must be a positive number"):
        OpenAIClient("http://h/v1", "m", max_tokens=bad)


# --- authentication ----------------------------------------------------------------------------


def test_the_api_key_is_sent_as_a_bearer_token_only_when_given(server: FakeServer) -> None:
    with_key, _ = client_for(server, api_key="sk-test")
    without_key, _ = client_for(server)
    server.queue(Reply(completion("a", usage=USAGE)), Reply(completion("b", usage=USAGE)))

    with_key.complete([ChatMessage(role="user", content="hello")], [])
    without_key.complete([ChatMessage(role="user", content="hello")], [])

    keyed, anonymous = (r.headers for r in server.requests)
    assert keyed["authorization"] == "Bearer sk-test"
    assert keyed["content-type"] == "application/json"
    assert "authorization" not in anonymous
    assert anonymous["content-type"] == "application/json"


def test_namespaced_tool_names_travel_in_the_protocols_alphabet(server: FakeServer) -> None:
    client, _ = client_for(server)
    lookup = {**WEATHER_TOOL, "name": "orders.lookup_order"}
    server.queue(
        Reply(completion(None, [wire_call("orders__lookup_order", '{"city": "x"}')], USAGE))
    )
    answer = client.complete([ChatMessage(role="user", content="Where is A1?")], [lookup])
    assert answer.tool_calls[0].name == "orders.lookup_order"
    assert server.last["tools"][0]["function"]["name"] == "orders__lookup_order"
    again = [ChatMessage(role="assistant", tool_calls=answer.tool_calls)]
    server.queue(Reply(completion("ok", usage=USAGE)))
    client.complete(again, [lookup])
    assert server.last["messages"][0]["tool_calls"][0]["function"]["name"] == "orders__lookup_order"


def test_a_refused_connection_near_the_runs_ceiling_is_still_an_outage() -> None:
    # The ceiling shortened the timeout, but the server was not slow, it was not there: that is
    # an outage to wait out, not the run's ceiling.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    clock = Clock()
    client = OpenAIClient(
        f"http://127.0.0.1:{port}", "m", timeout=60, max_retries=0, sleep=clock.sleep, clock=clock
    )
    client.give_up_at(clock.now + 5)

    with pytest.raises(EndpointDown, match="connection error"):
        client.complete([ChatMessage(role="user", content="hello")], [])


def test_an_outage_never_quotes_the_api_key(server: FakeServer) -> None:
    key = "sk-live-0123456789abcdefSECRET"
    client, _ = client_for(server, api_key=key, max_retries=0)
    server.queue(Reply(f"upstream rejected key {key}".encode(), 502))

    with pytest.raises(EndpointDown) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert key not in str(caught.value) and REDACTED in str(caught.value)
