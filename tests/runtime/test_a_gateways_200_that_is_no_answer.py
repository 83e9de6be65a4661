"""A 200 that is not the API's answer but a gateway's: an error object instead of choices (as a
gateway answers an upstream's failure), or a page (a proxy's maintenance page). Either was the
model's failure and ended the run for good; now it is tried again and, if it stays so, an
outage, as a 502 is (the client's _gateway_error argues it). An error object whose code is a
refusal ends the call as that refusal would. A gzip body nobody asked for is named, where it
was quoted as escaped binary."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from runtime import cli
from runtime.jsonl import JsonlJournal
from runtime.model import ChatMessage, EndpointDown
from runtime.openai_client import ModelHTTPError, ModelProtocolError, OpenAIClient
from runtime.openai_key import REDACTED
from tests.fakellm import FakeServer, Reply, completion, wire_call

ASK = [ChatMessage(role="user", content="hello")]
KEY = "sk-live-0123456789abcdefSECRET"
PAGE = b"<!doctype html><html><head><title>Maintenance</title></head><body>back soon</body></html>"


def client_for(server: FakeServer) -> tuple[OpenAIClient, list[float]]:
    waits: list[float] = []
    return OpenAIClient(server.url, "m", KEY, max_retries=2, sleep=waits.append), waits


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (PAGE, "HTTP 200 with a page, not the API's JSON: <!doctype html><html><head><title>"),
        (b"\n  <?xml version='1.0'?><Error>busy</Error>", "HTTP 200 with a page"),
        ({"error": {"message": "Internal overload, try later"}}, "HTTP 200 with an error: {"),
        ({"error": {"code": 502, "message": "upstream failed"}}, "with an error of code 502"),
        ({"error": {"code": "429", "message": "slow down"}}, "with an error of code 429"),
        ({"error": "overloaded"}, 'HTTP 200 with an error: "overloaded"'),
    ],
    ids=["html", "xml", "error", "error-502", "error-429-as-text", "error-text"],
)
def test_it_is_tried_again_then_an_outage(server: FakeServer, body: Any, said: str) -> None:
    client, waits = client_for(server)
    server.queue(*[Reply(body)] * 3)

    with pytest.raises(EndpointDown) as caught:  # not the run's end: it rests, to resume
        client.complete(ASK, [])

    assert said in str(caught.value)
    assert caught.value.attempts == 3 and len(waits) == 2 and caught.value.status == 200


def test_it_goes_on_when_the_server_behind_answers(server: FakeServer) -> None:
    client, _ = client_for(server)
    server.queue(Reply({"error": {"code": 503}}), Reply(PAGE), Reply(completion("hello")))

    assert client.complete(ASK, []).text == "hello"


def test_an_error_whose_code_is_a_refusal_is_that_refusal(server: FakeServer) -> None:
    client, waits = client_for(server)
    server.queue(Reply({"error": {"code": 401, "message": f"Incorrect API key provided: {KEY}"}}))

    with pytest.raises(ModelHTTPError) as caught:
        client.complete(ASK, [])

    assert "was answered HTTP 200 with an error of code 401 (the API key was not accepted" in str(
        caught.value
    )
    assert KEY not in str(caught.value) and REDACTED in str(caught.value)
    assert caught.value.status == 401 and waits == []


def test_a_page_that_quotes_the_key_keeps_it_out(server: FakeServer) -> None:
    client, _ = client_for(server)
    server.queue(*[Reply(b"<html>your key " + KEY.encode() + b" is on hold</html>")] * 3)

    with pytest.raises(EndpointDown) as caught:
        client.complete(ASK, [])

    assert KEY not in str(caught.value) and REDACTED in str(caught.value)


def test_a_gzip_body_is_named_not_quoted(server: FakeServer) -> None:
    client, waits = client_for(server)
    body = gzip.compress(json.dumps(completion("hello")).encode())
    server.queue(Reply(body, headers={"Content-Encoding": "gzip"}))

    with pytest.raises(ModelProtocolError) as caught:
        client.complete(ASK, [])

    assert "the reply is compressed (Content-Encoding: gzip)" in str(caught.value)
    assert "\\x" not in str(caught.value) and "\ufffd" not in str(caught.value) and waits == []


def test_on_the_command_line_the_run_rests_and_resumes(server, tmp_path, monkeypatch, capsys):
    """What the review found: the same gateway's answer journalled ModelFailed, the run over."""
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", server.url)
    monkeypatch.setenv("MINUTES_MODEL", "some-model")
    server.queue(*[Reply({"error": {"message": "overloaded", "type": "server_error"}})] * 5)
    path = tmp_path / "j.jsonl"
    fly = ["fly", "--team", "solo", "--model", "endpoint", "--no-sandbox", "--run-id", "r-gw"]

    code = cli.main([*fly, "--journal", str(path)])

    said = capsys.readouterr().err
    assert code == cli.EXIT_INTERRUPTED, said
    assert "HTTP 200 with an error" in said and f"python -m runtime resume {path}" in said
    kinds = [r.event.kind for r in JsonlJournal(path).read("run-r-gw")]
    assert "ModelFailed" not in kinds and kinds[-1] == "ModelCalled"

    server.queue(
        Reply(completion(None, [wire_call("list_files", '{"path": "."}', "c1")])),
        Reply(completion(None, [wire_call("done", '{"summary": "looked"}', "c2")])),
    )
    cli.main(["resume", str(path), "--no-sandbox", "--json"])
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["status"] != "escalated", outcome  # its verdict, on the model's answers
