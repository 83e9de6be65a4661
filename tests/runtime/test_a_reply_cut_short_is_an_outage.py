"""A reply whose connection closes cleanly (FIN) before the end its Content-Length gave is a
broken connection, tried again and, if it stays so, an outage, as a reset mid-body is. It was
read as the whole body: "the reply is not JSON", a failure of the model's that ended the run for
good, where the same answer cut by a reset left it to resume."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from runtime import http_deadline
from runtime.model import ChatMessage, EndpointDown
from runtime.openai_client import OpenAIClient
from tests.fakellm import completion

BODY = b'{"choices": [{"message": {"role": "assistant", "content": "hello world"}}]}'


class CuttingServer:
    """Answers every request 200 with a Content-Length of the whole body, writes `sent` bytes
    of it, and closes the connection cleanly."""

    def __init__(self, body: bytes, sent: int) -> None:
        self.body = body
        self.sent = sent
        self.answered = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed: the test is over
            with conn:
                self.read_request(conn)
                # Counted before a byte is sent: counted after, the client could read the cut
                # reply, give up and be asked how many were answered before this line ran.
                self.answered += 1
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                head += b"Content-Length: %d\r\n\r\n" % len(self.body)
                conn.sendall(head + self.body[: self.sent])
                conn.shutdown(socket.SHUT_WR)  # a FIN, not a reset

    @staticmethod
    def read_request(conn: socket.socket) -> None:
        """All of the request, so closing cannot reset it before the client reads."""
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(v)
                for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")[1:])
                if k.strip().lower() == b"content-length"
            ),
            0,
        )
        while len(body) < length:
            body += conn.recv(65536)


@pytest.fixture
def cutting(monkeypatch: pytest.MonkeyPatch) -> Iterator[CuttingServer]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    server = CuttingServer(BODY, len(BODY) // 2)
    yield server
    server.listener.close()


def test_a_body_cut_short_by_a_clean_close_is_a_broken_connection(cutting: CuttingServer) -> None:
    with pytest.raises(http_deadline.Unreachable) as caught:
        http_deadline.post(cutting.url + "/chat/completions", b"{}", {}, 5, 1 << 20)

    assert str(caught.value) == (
        f"the connection closed after {len(BODY) // 2} of the {len(BODY)} bytes its "
        "Content-Length announced"
    )


def test_a_model_reply_cut_short_is_tried_again_then_an_outage_not_the_runs_end(
    cutting: CuttingServer,
) -> None:
    waits: list[float] = []
    client = OpenAIClient(cutting.url, "m", max_retries=2, sleep=waits.append)

    with pytest.raises(EndpointDown) as caught:  # not ModelProtocolError: the run rests
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert caught.value.attempts == 3 and len(waits) == 2 and cutting.answered == 3
    assert "a connection error (the connection closed after" in str(caught.value)
    assert "not JSON" not in str(caught.value)


def test_a_body_read_to_its_length_and_a_capped_read_are_still_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check is against what the headers promised, not against the cap on what is read."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    body = str(completion("hi")).encode()
    whole = CuttingServer(body, len(body))
    try:
        assert http_deadline.post(whole.url, b"{}", {}, 5, 1 << 20) == body
        assert http_deadline.post(whole.url, b"{}", {}, 5, 9) == body[:10]  # limit + 1
    finally:
        whole.listener.close()
