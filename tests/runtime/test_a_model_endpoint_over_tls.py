"""A model endpoint over https: a certificate this machine does not trust is a setting to fix,
said at once, naming the host and why; it was taken for an outage, tried five times and the
run parked. A trusted one (here through SSL_CERT_FILE) answers, and its call ends by its
deadline as a plain one does."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from runtime.model import ChatMessage, EndpointDown
from runtime.openai_client import OpenAIClient
from runtime.openai_settings import ModelConfigError
from tests.fakellm import FakeServer, Reply, completion

TLS = Path(__file__).resolve().parents[1] / "fixtures" / "tls"
CERTIFICATE = TLS / "localhost.pem"  # self-signed, for localhost and 127.0.0.1, until 2125
ASK = [ChatMessage(role="user", content="hello")]


@pytest.fixture
def secure(server: FakeServer) -> FakeServer:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERTIFICATE, TLS / "localhost.key")
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    server.url = server.url.replace("http://127.0.0.1", "https://localhost")
    return server


def test_a_certificate_that_does_not_verify_is_a_setting_said_at_once(
    secure: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    waits: list[float] = []
    client = OpenAIClient(secure.url, "m", max_retries=4, sleep=waits.append)
    secure.queue(Reply(completion("never read")))

    with pytest.raises(ModelConfigError) as caught:
        client.complete(ASK, [])

    assert waits == []  # not tried again
    assert secure.requests == []
    message = str(caught.value)
    assert "the certificate of localhost did not verify (self-signed certificate)" in message
    assert "not an outage, so it is not tried again" in message
    assert "set SSL_CERT_FILE" in message


def test_a_trusted_certificate_answers_and_its_call_ends_by_its_deadline(
    secure: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(CERTIFICATE))
    client = OpenAIClient(secure.url, "m", timeout=0.5, max_retries=0)
    slow = Reply(completion("hi" + " " * 2000), drip=0.01)
    secure.queue(Reply(completion("hello over TLS")), slow)

    assert client.complete(ASK, []).text == "hello over TLS"
    with pytest.raises(EndpointDown, match=r"a timeout \(no answer within 0.5 s\)"):
        client.complete(ASK, [])
    assert slow.sent < slow.size / 2
