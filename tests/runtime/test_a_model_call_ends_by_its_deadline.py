"""A model call ends by its timeout (or the run's ceiling, the sooner), however the server
writes its answer. urllib's timeout bounds each read, not the call: a server writing a byte
every 50 ms never let one read wait its 2 s, and held a call with a 2 s timeout for 17 s (a run
with a 3 s ceiling for 41 s). The client now gives each read only what is left of the call, for
the status line and headers, the body, and an error's body; running out is the timeout it was
for a silent server."""

from __future__ import annotations

import pytest

from runtime.model import ChatMessage, EndpointDown
from runtime.openai_client import ModelHTTPError, OpenAIClient
from tests.fakellm import FakeServer, Reply, completion

ASK = [ChatMessage(role="user", content="hello")]


@pytest.mark.parametrize("drip_head", [False, True], ids=["body", "headers"])
def test_an_answer_written_a_byte_at_a_time_times_out_unread(
    server: FakeServer, drip_head: bool
) -> None:
    client = OpenAIClient(server.url, "m", timeout=0.3, max_retries=0)
    # Two thousand bytes, 10 ms apart: 20 s to write in full, each byte well within 0.3 s.
    pad = {"X-Pad": "p" * 1000} if drip_head else {}
    reply = Reply(completion("hi" + " " * 2000), headers=pad, drip=0.01, drip_head=drip_head)
    server.queue(reply)

    with pytest.raises(EndpointDown) as caught:
        client.complete(ASK, [])

    assert "a timeout (no answer within 0.3 s)" in str(caught.value)
    assert caught.value.status is None
    assert reply.sent < reply.size / 2  # the client hung up long before the end


def test_the_runs_ceiling_ends_a_dripping_answer_as_the_run_s_end(server: FakeServer) -> None:
    client = OpenAIClient(server.url, "m", timeout=60, max_retries=0)
    client.give_up_at(client.clock() + 0.3)
    reply = Reply(completion("hi" + " " * 2000), drip=0.01)
    server.queue(reply)

    with pytest.raises(ModelHTTPError) as caught:  # the run's end, not an outage
        client.complete(ASK, [])

    assert "the run's wall-clock ceiling left" in str(caught.value)
    assert "a timeout (no answer within" in str(caught.value)
    assert reply.sent < reply.size / 2


def test_a_refusal_whose_body_drips_is_said_with_what_arrived_in_time(server: FakeServer) -> None:
    client = OpenAIClient(server.url, "m", timeout=0.3, max_retries=0)
    reply = Reply(b"model not found" + b"." * 2000, 404, drip=0.01)
    server.queue(reply)

    with pytest.raises(ModelHTTPError) as caught:
        client.complete(ASK, [])

    # The status is what matters, and the words that came before the time ran out.
    assert caught.value.status == 404
    assert "was refused with HTTP 404" in str(caught.value)
    assert "model not" in str(caught.value)
    assert reply.sent < reply.size / 2
