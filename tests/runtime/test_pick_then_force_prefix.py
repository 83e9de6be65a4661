"""A pick then force step's two requests open alike, over a real local HTTP server.

A server that reuses the longest prefix of its last prompt (llama.cpp's) reads in again only
what follows the point where the two prompts part: the forced request sends the pick's
messages less its question, so they part no earlier than the server's chat template makes them.
They parted at the first token where the window held no system message: the system message a
chat template needs for the tool list went into the forced request alone.
"""

from __future__ import annotations

import pytest

from runtime.model import ChatMessage, ToolSpec
from runtime.openai_client import OpenAIClient
from tests.fakellm import FakeServer, Reply, completion, wire_call

WEATHER: ToolSpec = {
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
USAGE = {"prompt_tokens": 40, "completion_tokens": 3, "total_tokens": 43}
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
