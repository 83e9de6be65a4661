"""Looking a host's name up is part of a call's deadline (runtime/http_deadline.py): a name
resolver that never answers held a model call or a trace push for the resolver's own timeouts
(5 s a try, a try for each name server), or for good. The system's resolver is replaced here by
one that hangs until the test lets it go: socket.getaddrinfo is the seam the runtime calls,
not a vendor's API. The connection still speaks to the name: its Host header and, over TLS, the
name its certificate is checked against and sent as SNI."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runtime import http_deadline
from runtime.model import ChatMessage, EndpointDown
from runtime.openai_client import OpenAIClient
from runtime.otel import push as otlp_push
from tests.fakellm import FakeServer, Reply, completion

HANGS = "model.invalid"  # a name only the test's resolver knows
TLS = Path(__file__).resolve().parents[1] / "fixtures" / "tls"
CERTIFICATE = TLS / "localhost.pem"  # self-signed, for localhost and 127.0.0.1
ASK = [ChatMessage(role="user", content="hello")]
REAL = socket.getaddrinfo
LONG = 10  # seconds the hanging resolver hangs at most


class Resolver:
    """getaddrinfo that hangs for HANGS until `release` is set (or LONG s), answers `known` names with
    127.0.0.1, and asks the system's for the rest; `asked` is every name it was asked."""

    def __init__(self, known: tuple[str, ...] = ()) -> None:
        self.release = threading.Event()
        self.known = known
        self.asked: list[str] = []

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        self.asked.append(host)
        if host == HANGS and not self.known:
            # Far past every deadline here; not for good, so that a call that waits for the
            # resolver fails (a name not known) rather than hang the tests.
            self.release.wait(LONG)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if host in self.known:
            return REAL("127.0.0.1", port, *args, **kwargs)
        return REAL(host, port, *args, **kwargs)


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Resolver]:
    # Proxies from the environment would take the names to a proxy instead.
    monkeypatch.setenv("NO_PROXY", "*")
    monkeypatch.setenv("no_proxy", "*")
    hanging = Resolver()
    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    # Places of its own, so threads another test left do not count here.
    monkeypatch.setattr(http_deadline, "_lookups", threading.BoundedSemaphore(2))
    yield hanging
    hanging.release.set()


def looking_up() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"look up {HANGS}" and t.is_alive()]


def test_a_resolver_that_hangs_ends_the_call_by_its_deadline(resolver: Resolver) -> None:
    with pytest.raises(http_deadline.Unresolved) as caught:
        http_deadline.post(f"http://{HANGS}:8080/v1/chat/completions", b"{}", {}, 0.3, 100)

    assert caught.value.host == HANGS
    assert str(caught.value) == f"looking up the address of {HANGS} did not finish in time"
    assert isinstance(caught.value, TimeoutError)  # an outage, as a connect's timeout is
    # The call came back while the resolver still held its look-up: it did not wait for it.
    assert not resolver.release.is_set()
    (held,) = looking_up()
    # And the look-up's thread ends once the resolver answers, leaving nothing behind.
    resolver.release.set()
    held.join(timeout=10)
    assert not held.is_alive()


def test_threads_a_hanging_resolver_holds_are_bounded(resolver: Resolver) -> None:
    for _ in range(4):
        with pytest.raises(http_deadline.Unresolved):
            http_deadline.post(f"http://{HANGS}/v1", b"{}", {}, 0.1, 100)

    # Two places: the third and fourth calls found them taken and waited out their deadline.
    assert len(looking_up()) == 2
    assert resolver.asked.count(HANGS) == 2
    resolver.release.set()
    for held in looking_up():
        held.join(timeout=10)
    assert looking_up() == []
    # The places are free again: the next look-up is made (and fails as the resolver says).
    with pytest.raises(http_deadline.Unreachable, match="Name or service not known"):
        http_deadline.post(f"http://{HANGS}/v1", b"{}", {}, 5, 100)


def test_the_model_client_says_the_host_was_not_looked_up(resolver: Resolver) -> None:
    client = OpenAIClient(f"http://{HANGS}:8080/v1", "m", timeout=0.2, max_retries=0)

    with pytest.raises(EndpointDown) as caught:
        client.complete(ASK, [])

    assert (
        f"the address of {HANGS} was not looked up within 0.2 s: the name resolver did not answer"
    ) in str(caught.value)


def test_the_trace_push_says_the_host_was_not_looked_up(resolver: Resolver) -> None:
    answer = otlp_push.post(f"http://{HANGS}:4318/v1/traces", b"", {}, 0.2)

    assert answer.status is None
    assert answer.detail == (
        f"the address of the collector's host {HANGS} was not looked up within 0.2 s: "
        "the name resolver did not answer"
    )


def test_the_request_names_the_host_not_the_address_it_was_found_at(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "*")
    monkeypatch.setenv("no_proxy", "*")
    known = Resolver(known=(HANGS,))
    monkeypatch.setattr(socket, "getaddrinfo", known)
    port = server.httpd.server_address[1]
    server.queue(Reply(completion("hi")))

    http_deadline.post(f"http://{HANGS}:{port}/v1/chat/completions", b"{}", {}, 5, 1 << 20)

    assert known.asked == [HANGS]
    assert server.requests[-1].headers["host"] == f"{HANGS}:{port}"


def test_over_tls_the_certificate_is_checked_against_the_name(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(CERTIFICATE))
    known = Resolver(known=("localhost",))
    monkeypatch.setattr(socket, "getaddrinfo", known)
    names: list[str | None] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERTIFICATE, TLS / "localhost.key")
    context.sni_callback = lambda _sock, name, _context: names.append(name)
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    port = server.httpd.server_address[1]
    server.queue(Reply(completion("hello over TLS")))

    client = OpenAIClient(f"https://localhost:{port}/v1", "m", timeout=5, max_retries=0)
    assert client.complete(ASK, []).text == "hello over TLS"

    assert known.asked == ["localhost"]  # found through the look-up, by its address
    assert names == ["localhost"]  # SNI: an address is never sent as one
    assert server.requests[-1].headers["host"] == f"localhost:{port}"
