"""A step sent on a broker connection that went silent (a proxy, a NAT or a cloud load balancer
that dropped it without a reset) is given up on after the broker's socket timeout and sent on
a new connection: without the timeout, the send, and the web request that started the run,
waited until TCP gave up (Linux's retransmissions: about fifteen minutes), or for ever where
something between still acknowledged the bytes, as this proxy does."""

from __future__ import annotations

import socket
import threading
import time
from urllib.parse import urlsplit

import pytest

from services import queue
from tests.tasks.conftest import REDIS, needs_redis, use_broker

pytestmark = [needs_redis, pytest.mark.django_db(transaction=True)]


class SilencingProxy:
    """A TCP proxy to Redis that can go silent, both ways, on the connections it carries now,
    leaving them open; a connection made after goes through."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.carried: set[socket.socket] = set()
        self.silent: set[socket.socket] = set()
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:  # closed
                return
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.carried.add(client)
            for source, sink in ((client, upstream), (upstream, client)):
                args = (source, sink, client)
                threading.Thread(target=self.pump, args=args, daemon=True).start()

    def pump(self, source: socket.socket, sink: socket.socket, client: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if client not in self.silent:
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            source.close()
            sink.close()

    def silence(self) -> int:
        """Go silent on every connection carried so far; how many."""
        with self.lock:
            self.silent |= self.carried
            return len(self.silent)

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def proxy(settings):
    import redis

    assert REDIS is not None
    target = urlsplit(REDIS)
    server = redis.Redis.from_url(REDIS)
    server.flushdb()
    proxy = SilencingProxy(target.hostname or "127.0.0.1", target.port or 6379)
    use_broker(
        f"redis://127.0.0.1:{proxy.port}{target.path}", settings.CELERY_BROKER_TRANSPORT_OPTIONS
    )
    try:
        yield proxy, server
    finally:
        proxy.close()
        use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)


def test_a_send_on_a_silent_connection_goes_out_on_a_new_one(proxy, settings):
    proxy, server = proxy
    queue.advance("r-before")  # the producer's pooled connection now exists
    assert proxy.silence() >= 1
    sent = threading.Event()

    def send() -> None:
        queue.advance("r-after")
        sent.set()

    began = time.monotonic()
    threading.Thread(target=send, daemon=True).start()
    # Well past the socket timeout and the publish's retries; without the timeout it waits on.
    assert sent.wait(settings.BROKER_SOCKET_TIMEOUT * 4), "the send waited on the silent connection"
    assert time.monotonic() - began >= settings.BROKER_SOCKET_TIMEOUT * 0.9  # it did time out
    assert server.llen("celery") == 2  # both steps are in the queue, once each
