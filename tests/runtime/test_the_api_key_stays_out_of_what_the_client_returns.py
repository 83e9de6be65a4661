"""The API key reaches nothing the client returns or raises: not a refusal that quotes it where
the quote is cut short (the body was cut to 500 characters before the key was blanked, which
left 40 of a 54-character key), nor one that writes it with JSON's escapes, nor a reply that
echoes it (a gateway copying the Authorization header into "model" put the whole key in the
journal). A reply is blanked before it is journalled, so its replay, served from the journal,
is the same."""

from __future__ import annotations

import json

import pytest

from runtime import flight
from runtime.events import ModelResponded
from runtime.jsonl import JsonlJournal
from runtime.model import ChatMessage
from runtime.openai_client import ModelHTTPError, OpenAIClient
from runtime.openai_key import REDACTED, blanked
from runtime.openai_wire import SNIPPET_CHARS
from runtime.team import Services
from tests.fakellm import FakeServer, Reply, completion, wire_call

KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghij"
ASK = [ChatMessage(role="user", content="hello")]


def longest_start_of_the_key(text: str) -> int:
    return max((n for n in range(1, len(KEY) + 1) if KEY[:n] in text), default=0)


@pytest.mark.parametrize("inside", [8, 20, 40, 53])
def test_a_refusal_cut_short_inside_the_quoted_key_shows_none_of_it(
    server: FakeServer, inside: int
) -> None:
    client = OpenAIClient(server.url, "m", api_key=KEY, max_retries=0)
    words = " Incorrect API key provided: "
    # The body's first SNIPPET_CHARS characters (what a message quotes) end `inside` the key.
    pad = SNIPPET_CHARS - len('{"error": {"message": "') - len(words) - inside
    server.queue(Reply({"error": {"message": "x" * pad + words + KEY}}, 401))

    with pytest.raises(ModelHTTPError) as caught:
        client.complete(ASK, [])

    assert longest_start_of_the_key(str(caught.value)) < 8  # "sk-proj" says nothing
    assert "HTTP 401" in str(caught.value)


@pytest.mark.parametrize(
    "written",
    [KEY.replace("-", "\\u002d"), "".join(f"\\u{ord(c):04x}" for c in KEY)],
    ids=["some-escaped", "all-escaped"],
)
def test_a_refusal_quoting_the_key_with_escapes_shows_none_of_it(
    server: FakeServer, written: str
) -> None:
    client = OpenAIClient(server.url, "m", api_key=KEY, max_retries=0)
    body = '{"error": {"message": "Incorrect API key provided: ' + written + '"}}'
    server.queue(Reply(body.encode(), 401))

    with pytest.raises(ModelHTTPError) as caught:
        client.complete(ASK, [])

    assert str(caught.value).endswith(f"Incorrect API key provided: {REDACTED}" + '"}}')


def test_a_reply_echoing_the_key_is_journalled_without_it_and_replays(server, tmp_path) -> None:
    models = {
        "MINUTES_MODEL_BASE_URL": server.url,
        "MINUTES_MODEL": "some-model",
        "MINUTES_MODEL_API_KEY": KEY,
    }
    args = json.dumps({"summary": f"used {KEY}", KEY: [KEY[:20] + "..."]})
    echo = completion(f"the key is {KEY}", [wire_call("done", args, f"call-{KEY}")])
    echo["model"] = f"gateway-debug Bearer {KEY}"
    echo["id"] = KEY
    server.queue(Reply(echo))
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("solo", "solo-fix", "r-echo", model="endpoint")

    flight.fly(journal, config, "r-echo", tmp_path, services=Services(models=models))

    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was sent
    written = (tmp_path / "j.jsonl").read_text()
    assert longest_start_of_the_key(written) < 8
    (answer,) = [r.event for r in journal.read("run-r-echo") if isinstance(r.event, ModelResponded)]
    assert answer.served is not None
    assert answer.served.model == f"gateway-debug Bearer {REDACTED}"
    assert answer.served.response_id == REDACTED
    assert answer.text == f"the key is {REDACTED}"
    assert answer.tool_calls[0].id == f"call-{REDACTED}"
    assert answer.tool_calls[0].args == {
        "summary": f"used {REDACTED}",
        REDACTED: [f"{REDACTED}..."],
    }
    assert flight.replay(journal, "r-echo").identical


def test_the_start_of_the_key_is_blanked_only_where_a_quote_was_cut_in_it() -> None:
    assert blanked(f"key {KEY[:12]}", KEY) == f"key {REDACTED}"  # cut at the end
    assert blanked(f"key {KEY[:30]}... and more", KEY) == f"key {REDACTED}... and more"
    # Not the key going on, nor cut: a start shared by every project key is left.
    assert blanked(f"keys look like {KEY[:8]}xyz", KEY) == f"keys look like {KEY[:8]}xyz"
    assert blanked(f"key {KEY[:7]}", KEY) == f"key {KEY[:7]}"  # too short to say anything
    assert blanked("a placeholder key x", "x") == "a placeholder key x"
