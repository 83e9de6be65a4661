"""A trace push against collectors that answer badly (runtime/otel/push.py).

Each POST is over by its timeout however the collector writes (urllib's timeout bounded each
read: a status line dripped a byte a second held a 2 s push for 37 s, a dripped body for good),
reads only the start of an answer (a 2 GiB body was read whole), and follows no redirect (a 302
sent the credentials elsewhere as a GET, and the push counted as delivered).
"""

from __future__ import annotations

import socket
import ssl
import time
from pathlib import Path

import pytest

from runtime.otel.push import PushFailed, push
from tests.hostile_collector import Collector, ok, status

BODY = b"\x0a\x00" * 10
SECRET = "Bearer team-secret-0123456789abcdef"
HEADERS = {"authorization": SECRET, "x-api-key": "phx-SECRET-KEY-42"}
GUARD = 20.0  # seconds: only a guard against hanging, never a measure


def drip_head(conn: socket.socket, collector: Collector) -> None:
    collector.drip(conn, status(200, "OK"), 0.05)


def drip_body(conn: socket.socket, collector: Collector) -> None:
    collector.write(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
    collector.drip(conn, b"x" * 100_000, 0.05)


@pytest.mark.parametrize("answer", [drip_head, drip_body], ids=["status-line", "body"])
def test_a_dripping_answer_ends_the_push_by_its_timeout(collectors, answer) -> None:
    collector = collectors(answer)
    began = time.monotonic()

    with pytest.raises(PushFailed) as caught:
        push(BODY, collector.url, HEADERS, timeout=0.5, attempts=2, sleep=lambda s: None)

    assert "the collector did not answer within 0.5 s" in str(caught.value)
    assert caught.value.status is None and caught.value.attempts == 2  # a timeout is retried
    assert len(collector.seen) == 2
    assert time.monotonic() - began < GUARD


def test_a_huge_answer_is_not_read_past_its_start(collectors) -> None:
    size = 2 * 1024**3

    def huge(conn: socket.socket, collector: Collector) -> None:
        collector.write(conn, b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
        block = b"y" * (1 << 16)
        while not collector.stopped.is_set() and collector.sent < size:
            collector.write(conn, block)  # raises once the client hangs up

    collector = collectors(huge)
    result = push(BODY, collector.url, HEADERS, timeout=5, attempts=1)

    assert result.status == 200
    # The push hung up after a few KiB: the socket's buffers hold what else was written.
    deadline = time.monotonic() + GUARD
    while time.monotonic() < deadline and collector.sent < 64 * 1024**2:
        before = collector.sent
        time.sleep(0.2)
        if collector.sent == before:
            break
    assert collector.sent < 64 * 1024**2


def test_a_redirect_is_not_followed_and_the_push_fails_saying_where_it_pointed(
    collectors,
) -> None:
    target = collectors(ok)

    def redirect(conn: socket.socket, collector: Collector) -> None:
        moved = f"Location: {target.url}/steal?token=abc\r\n"
        collector.write(conn, status(302, "Found", extra=moved))

    collector = collectors(redirect)

    with pytest.raises(PushFailed) as caught:
        push(BODY, collector.url, HEADERS, timeout=2, attempts=4, sleep=lambda s: None)

    message = str(caught.value)
    assert caught.value.status == 302 and caught.value.attempts == 1  # not tried again
    assert f"HTTP 302 redirect to {target.url}/steal, not followed" in message
    assert "MINUTES_OTLP_ENDPOINT" in message
    assert "token=abc" not in message
    assert target.seen == []  # nothing went to where it pointed
    assert [s.method for s in collector.seen] == ["POST"]


def echo(padding: int):
    """A 401 whose body echoes the request's headers, after `padding` characters."""

    def answer(conn: socket.socket, collector: Collector) -> None:
        said = "." * padding + "unauthorized: " + repr(collector.seen[-1].headers)
        collector.write(conn, status(401, "Unauthorized", said.encode()))

    return answer


@pytest.mark.parametrize("padding", [0, 270, 290])
def test_a_refusal_echoing_the_headers_is_quoted_with_their_values_blanked(
    collectors, padding
) -> None:
    # 270 and 290: the quote's cut (300 characters) falls inside a value, leaving its start.
    collector = collectors(echo(padding))

    with pytest.raises(PushFailed) as caught:
        push(BODY, collector.url, HEADERS, timeout=2, attempts=1)

    message = str(caught.value)
    assert caught.value.status == 401
    assert "team-secret" not in message and "SECRET-KEY" not in message
    assert "Bearer team" not in message and "phx-SECR" not in message
    assert "[header value hidden]" in message or message.endswith("...")


def test_a_collector_quoting_the_token_alone_has_it_blanked(collectors) -> None:
    def token(conn: socket.socket, collector: Collector) -> None:
        said = b"invalid token team-secret-0123456789abcdef"
        collector.write(conn, status(403, "Forbidden", said))

    collector = collectors(token)

    with pytest.raises(PushFailed) as caught:
        push(BODY, collector.url, HEADERS, timeout=2, attempts=1)

    assert str(caught.value) == "HTTP 403: invalid token [header value hidden]"


@pytest.mark.parametrize("value", ["Bearer tok-SECRET-123\n", "Bearer tok-SECRET-é€"])
def test_a_header_value_that_cannot_be_sent_fails_at_once_without_quoting_it(
    collectors, value
) -> None:
    collector = collectors(ok)

    with pytest.raises(PushFailed) as caught:
        push(BODY, collector.url, {"authorization": value}, timeout=2, attempts=4)

    message = str(caught.value)
    assert caught.value.attempts == 1 and caught.value.status is None
    assert "the request could not be sent (" in message and "MINUTES_OTLP_HEADERS" in message
    assert "SECRET" not in message


def test_a_retry_after_that_is_not_a_number_is_our_own_backoff(collectors) -> None:
    # "²".isdigit() is True and float("²") raises: the ValueError escaped the push.
    def busy(conn: socket.socket, collector: Collector) -> None:
        collector.write(conn, status(503, "Busy", extra="Retry-After: \xb2\r\n"))

    collector = collectors(busy)
    waited: list[float] = []

    with pytest.raises(PushFailed) as caught:
        push(BODY, collector.url, HEADERS, timeout=2, attempts=3, sleep=waited.append)

    assert caught.value.status == 503 and caught.value.attempts == 3
    assert len(waited) == 2 and all(0 < w <= 2 for w in waited)  # backoff 1 s, then 2 s


def test_a_certificate_that_does_not_verify_fails_at_once_naming_why(
    collectors, monkeypatch
) -> None:
    tls = Path(__file__).resolve().parents[1] / "fixtures" / "tls"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls / "localhost.pem", tls / "localhost.key")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    collector = collectors(ok, tls=context)
    waited: list[float] = []

    with pytest.raises(PushFailed) as caught:
        push(BODY, collector.url, HEADERS, timeout=2, attempts=4, sleep=waited.append)

    message = str(caught.value)
    assert caught.value.attempts == 1 and waited == []  # not an outage: said at once
    assert "the collector's TLS certificate did not verify (localhost: " in message
    assert "SSL_CERT_FILE" in message
    assert collector.seen == []
