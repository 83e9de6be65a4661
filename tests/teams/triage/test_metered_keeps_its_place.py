"""A specialist's model sits behind the run's spend breaker (`Metered`). The wrapper must pass
on everything that says where the model is: the run's wall-clock ceiling (`give_up_at`) to an
endpoint client, and a scripted model's place (`fast_forward`, `mark`, `seek`) to the script,
or a resumed specialist answers from its script's start and a slow endpoint is waited for past
the run's end."""

from __future__ import annotations

import pytest

from runtime.events import Usage
from runtime.fanout.breakers import SpendBreaker
from runtime.model import ChatMessage, ModelError, ModelResponse, ScriptedClient
from runtime.openai_client import ModelHTTPError, OpenAIClient
from teams.triage.spend import Metered
from tests.fakellm import FakeServer, Reply, completion, wire_call
from tests.runtime.test_openai_client import Clock

HELLO = [ChatMessage(role="user", content="hello")]
CUT = {"prompt_tokens": 1_000, "completion_tokens": 8_000, "total_tokens": 9_000}


def breaker() -> SpendBreaker:
    return SpendBreaker("r-1", cap=1_000_000)


def test_the_runs_ceiling_reaches_the_endpoint_client_behind_the_breaker(server: FakeServer):
    clock = Clock()
    client = OpenAIClient(server.url, "m", max_retries=5, sleep=clock.sleep, clock=clock)
    metered = Metered(client, breaker())
    metered.give_up_at(clock.now + 10)
    server.queue(*[Reply(b"busy", 503, {"Retry-After": "4"}) for _ in range(6)])
    with pytest.raises(ModelHTTPError) as caught:
        metered.complete(HELLO, [])
    # Tries at 0, 4 and 8 s; the next would fall after the ceiling at 10 s.
    assert len(server.requests) == 3
    assert "the run's wall-clock ceiling falls before the next try" in str(caught.value)


def answers(n: int) -> list[ModelResponse]:
    return [
        ModelResponse(text=f"answer {i}", tool_calls=[], usage=Usage(total=5)) for i in range(n)
    ]


def test_a_scripted_specialist_behind_the_breaker_goes_on_from_its_place():
    metered = Metered(ScriptedClient(answers(4)), breaker())
    metered.fast_forward(2)  # two answers were recorded before a resume
    assert metered.complete(HELLO, []).text == "answer 2"
    place = metered.mark()
    assert place == {"position": 3, "served": 3}
    assert metered.complete(HELLO, []).text == "answer 3"
    metered.seek(place)  # back to a snapshot's place
    assert metered.complete(HELLO, []).text == "answer 3"
    # Every answer counted toward the run's spending, as the breaker's sum says.
    assert metered.breaker.spent == 15


def test_an_answer_that_could_not_be_used_counts_toward_the_spend(server: FakeServer):
    """A reply cut off mid-call was paid for: the breaker counts it as it counts an answer."""
    body = completion(None, [wire_call("done", '{"outcome": "o')], CUT)
    body["choices"][0]["finish_reason"] = "length"
    server.queue(Reply(body))
    spend = breaker()
    with pytest.raises(ModelError):
        Metered(OpenAIClient(server.url, "m", max_retries=0), spend).complete(HELLO, [])
    assert spend.spent == 9_000
