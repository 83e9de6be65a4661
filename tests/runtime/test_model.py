from __future__ import annotations

import pytest

from runtime.events import ModelResponded, Usage
from runtime.model import (
    ModelError,
    ReplayClient,
    ReplayExhausted,
    ScriptedClient,
    ScriptExhausted,
    call,
    say,
)


def responded(agent, text, usage):
    return ModelResponded(agent=agent, text=text, tool_calls=[], usage=Usage(total=usage))


def test_a_scripted_client_answers_in_order_and_numbers_its_calls():
    client = ScriptedClient([call("list_files", 10), say("hm", 5)], name="coder")
    first = client.complete([], [])
    assert first.tool_calls[0].id == "coder-1-1" and first.usage.total == 10
    assert client.complete([], []).text == "hm"
    with pytest.raises(ScriptExhausted, match="all were used"):
        client.complete([], [])


def test_a_scripted_client_fast_forwards_past_answers_already_served():
    client = ScriptedClient([say("a", 1), say("b", 1), say("c", 1)])
    client.fast_forward(2)
    assert client.complete([], []).text == "c"


def test_a_replay_client_serves_one_agents_recorded_answers():
    events = [
        responded("coder", "one", 3),
        responded("tester", "x", 1),
        responded("coder", "two", 4),
    ]
    client = ReplayClient(events, "coder")
    assert [client.complete([], []).text for _ in range(2)] == ["one", "two"]
    with pytest.raises(ReplayExhausted, match="2 responses for 'coder'"):
        client.complete([], [])


def test_a_replay_client_hands_over_to_the_live_client_where_the_recording_ends():
    live = ScriptedClient([say("a", 1), say("b", 1), say("c", 1)])
    client = ReplayClient(
        [responded("coder", "a", 1), responded("coder", "b", 1)], "coder", then=live
    )
    assert [client.complete([], []).text for _ in range(3)] == ["a", "b", "c"]


def test_a_v1_response_cannot_be_replayed_and_says_why():
    old = ModelResponded(agent="coder", turn=0, text=None, tool_calls=None, usage=Usage(total=3))
    with pytest.raises(ModelError, match="ModelResponded v1"):
        ReplayClient([old], "coder").complete([], [])
