"""A collector for tests that answers as a hostile or broken one would: raw sockets, one
thread per connection, every request recorded (method, path, headers, body size).

`answer(conn, collector)` writes the answer; a drip stops when the test ends (`stop`) or the
client hangs up, so a test that times out leaves no thread writing.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: int


class Collector:
    def __init__(
        self, answer: Callable[[socket.socket, Collector], None], tls: ssl.SSLContext | None
    ) -> None:
        self.answer = answer
        self.tls = tls
        self.seen: list[Seen] = []
        self.sent = 0  # bytes of answers written
        self.stopped = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        host = "localhost" if tls else "127.0.0.1"  # the test certificate's name
        self.url = f"{'https' if tls else 'http'}://{host}:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                if self.tls is not None:
                    conn = self.tls.wrap_socket(conn, server_side=True)
                conn.settimeout(10)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {
                    k.strip().lower(): v.strip()
                    for k, _, v in (line.partition(":") for line in lines[1:])
                }
                size = int(headers.get("content-length", "0"))
                while len(body) < size:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    body += chunk
                method, path, _ = lines[0].split(" ", 2)
                self.seen.append(Seen(method, path, headers, len(body)))
                self.answer(conn, self)
            except (OSError, ssl.SSLError):
                pass  # the client hung up: what a deadline does

    def write(self, conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        self.sent += len(data)

    def drip(self, conn: socket.socket, data: bytes, every: float) -> None:
        """`data` a byte at a time, `every` seconds apart, until the test ends."""
        for byte in data:
            if self.stopped.wait(every):
                return
            self.write(conn, bytes([byte]))

    def close(self) -> None:
        self.stopped.set()
        # Wakes the thread blocked in accept(): a close alone leaves it waiting on the file
        # descriptor, which the next listener made (another test's collector) may reuse.
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()


@pytest.fixture
def collectors() -> Iterator[Callable[..., Collector]]:
    made: list[Collector] = []

    def make(
        answer: Callable[[socket.socket, Collector], None], tls: ssl.SSLContext | None = None
    ) -> Collector:
        made.append(Collector(answer, tls))
        return made[-1]

    yield make
    for collector in made:
        collector.close()


def status(code: int, reason: str, body: bytes = b"", extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {code} {reason}\r\n{extra}Content-Length: {len(body)}\r\n\r\n".encode("latin-1")
        + body
    )


def ok(conn: socket.socket, collector: Collector) -> None:
    collector.write(conn, status(200, "OK"))
