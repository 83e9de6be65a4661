"""Pick then force (small local models: which tool next, then that tool's call forced), over a
real local HTTP server that speaks the protocol.

A step's two requests open alike.
A server that reuses the longest prefix of its last prompt (llama.cpp's) reads in again only
what follows the point where the two prompts part: the forced request sends the pick's
messages less its question, so they part no earlier than the server's chat template makes them.
They parted at the first token where the window held no system message: the system message a
chat template needs for the tool list went into the forced request alone.
"""

from __future__ import annotations

import pytest

from runtime.model import ChatMessage, ToolCall, ToolSpec
from runtime.openai_client import OpenAIClient
from tests.fakellm import FakeServer, Reply, completion, wire_call

WEATHER: ToolSpec = {
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
USAGE = {"prompt_tokens": 40, "completion_tokens": 3, "total_tokens": 43}
SMALL = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
WITHOUT_SYSTEM = [
    ChatMessage(role="user", content="Weather in Oslo?"),
    ChatMessage(role="assistant", content="Looking."),
    ChatMessage(role="user", content="Well?"),
]
WITH_SYSTEM = [ChatMessage(role="system", content="You are terse."), *WITHOUT_SYSTEM]


@pytest.mark.parametrize("window", [WITHOUT_SYSTEM, WITH_SYSTEM], ids=["no-system", "system"])
def test_the_forced_request_sends_the_picks_messages_less_its_question(
    server: FakeServer, window: list[ChatMessage]
) -> None:
    server.queue(
        Reply(completion("weather", usage=USAGE)),
        Reply(completion(None, [wire_call("weather", '{"city": "Oslo"}')], USAGE)),
    )
    client = OpenAIClient(server.url, "test-model", max_retries=0, pick_then_force=True)
    answer = client.complete(window, [WEATHER])
    assert [c.name for c in answer.tool_calls] == ["weather"]
    pick, forced = (r.body for r in server.requests)
    *opening, question = pick["messages"]
    assert question["role"] == "user" and "weather" in question["content"]
    assert forced["messages"] == opening
    # A system message opens both (chat templates write the tool list into it), and the
    # window follows it unchanged.
    assert opening[0]["role"] == "system"
    assert opening[-len(window) :] == [{"role": m.role, "content": m.content} for m in window]


DONE: ToolSpec = {"name": "done", "description": "Finish.", "parameters": {"type": "object"}}


def test_pick_then_force_asks_which_tool_then_forces_it_and_sums_the_usage(
    server: FakeServer,
) -> None:
    client = OpenAIClient(server.url, "test-model", max_retries=0, pick_then_force=True)
    server.queue(
        Reply(completion("I would call `weather`.", usage=SMALL)),
        Reply(completion(None, [wire_call("weather", '{"city": "Oslo"}')], SMALL)),
    )
    answer = client.complete(
        [ChatMessage(role="user", content="Weather in Oslo?")], [WEATHER, DONE]
    )
    assert answer.tool_calls == [ToolCall(id="call_abc", name="weather", args={"city": "Oslo"})]
    assert answer.usage.total == 34 and answer.usage.prompt == 24
    pick, forced = (r.body for r in server.requests)
    assert "tools" not in pick and "weather, done" in pick["messages"][-1]["content"]
    assert forced["tool_choice"] == {"type": "function", "function": {"name": "weather"}}
    # Tools reach some chat templates only through a system message: one is added.
    assert forced["messages"][0]["role"] == "system"
    assert forced["messages"][1] == {"role": "user", "content": "Weather in Oslo?"}


def test_pick_then_force_keeps_an_answer_that_names_no_tool_as_text(server: FakeServer) -> None:
    client = OpenAIClient(server.url, "test-model", max_retries=0, pick_then_force=True)
    server.queue(Reply(completion("Oslo is lovely in spring.", usage=SMALL)))
    answer = client.complete([ChatMessage(role="user", content="Weather in Oslo?")], [WEATHER])
    assert answer.text == "Oslo is lovely in spring." and answer.tool_calls == []
    assert len(server.requests) == 1


def test_pick_then_force_drops_a_call_to_a_tool_other_than_the_forced_one(
    server: FakeServer,
) -> None:
    client = OpenAIClient(server.url, "test-model", max_retries=0, pick_then_force=True)
    server.queue(
        Reply(completion("done", usage=SMALL)),
        Reply(completion(None, [wire_call("weather", '{"city": "Oslo"}')], SMALL)),
    )
    answer = client.complete([ChatMessage(role="user", content="Stop.")], [WEATHER, DONE])
    assert answer.tool_calls == []


def test_named_tool_prefers_the_earliest_and_then_the_longest_mention() -> None:
    from runtime.openai_client import named_tool

    names = ["run", "run_tests", "read_file"]
    assert named_tool("call run_tests now", names) == "run_tests"
    assert named_tool("Read file, then run tests", names) == "read_file"
    assert named_tool("nothing to do", names) is None
