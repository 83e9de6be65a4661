"""A fake OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

It answers from a queue of canned replies and records every request, so tests can check both
directions of the protocol over real sockets. Only what is outside Minutes (a vendor's model
API) is faked; our client and our runtime run for real against it.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

# --- the fake server ---------------------------------------------------------------------------


@dataclass
class Reply:
    """One canned answer: status, headers, and a body (a dict is sent as JSON)."""

    body: dict[str, Any] | bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    stall: float = 0.0  # seconds to hold the answer back (released early at teardown)
    # Seconds between the bytes of the body (with drip_head, of the status line and headers
    # too), written one at a time; `sent` counts the bytes of the answer written before the
    # client hung up (or teardown came), and `size` is all of them.
    drip: float = 0.0
    drip_head: bool = False
    sent: int = 0
    size: int = 0


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any


class FakeServer:
    """A chat-completions server on 127.0.0.1 answering from a queue of canned replies."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Request] = []
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fake.requests.append(
                    Request(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw)
                    )
                )
                reply = fake.replies.popleft() if fake.replies else Reply(b"no reply queued", 599)
                if reply.stall:
                    fake.release.wait(reply.stall)
                body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body)
                data = body.encode() if isinstance(body, str) else body
                if reply.drip:
                    self.drip(reply, data)
                    return
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up waiting (the timeout test)

            def drip(self, reply: Reply, data: bytes) -> None:
                head = f"HTTP/1.1 {reply.status} X\r\nContent-Length: {len(data)}\r\n"
                head += "".join(f"{name}: {value}\r\n" for name, value in reply.headers.items())
                answer = head.encode() + b"\r\n" + data
                reply.size = len(answer)
                self.close_connection = True
                at_once = 0 if reply.drip_head else len(answer) - len(data)
                pieces = [answer[:at_once]] + [bytes([b]) for b in answer[at_once:]]
                for piece in pieces:
                    try:
                        self.wfile.write(piece)
                    except OSError:
                        return  # the client hung up
                    reply.sent += len(piece)
                    if fake.release.wait(reply.drip):
                        return

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        # A short poll interval so shutdown at teardown takes milliseconds, not half a second.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    @property
    def last(self) -> Any:
        return self.requests[-1].body


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    # A proxy configured in the environment must not intercept calls to the local server.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    fake = FakeServer()
    fake.thread.start()
    yield fake
    fake.release.set()
    fake.httpd.shutdown()
    fake.httpd.server_close()
    fake.thread.join(timeout=2)


def completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A chat-completions reply body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def wire_call(name: str, arguments: str, call_id: str | None = "call_abc") -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return call
