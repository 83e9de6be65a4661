"""One outbound HTTP POST that is over by a deadline, and follows no redirect.

Shared by the model client and the trace push (runtime/otel/push.py).

urllib's timeout bounds each socket operation, not the exchange: a server writing its answer a
byte every 50 ms never lets one read wait 2 s, and held a call with a 2 s timeout for 17 s
(and a run with a 3 s ceiling for 41 s); a collector dripping its status line held a push with
a 2 s timeout for 37 s, and one dripping its body held it for good. Here the whole call
(connecting, sending, reading the status line, the headers and the body, an error's body too)
ends by one instant on the monotonic clock: every read and write waits at most what is left of
it, and one begun after it raises TimeoutError, as a silent server's timeout does. Looking the
host's name up is within it too (`addresses`): the system's resolver has only its own timeouts
(resolv.conf's 5 s a try, a try for each name server, or none for a broken NSS module), which
held a worker past any deadline. Only the start of a body is read (`limit`), so a server cannot
fill the worker's memory either.

No redirect is followed. urllib's default follows 301, 302 and 303 anywhere, to another host or
to plain http, with the request's credentials in its headers, and turns the POST into a GET
whose answer was taken for the server's: neither a model API nor a collector has reason to
send one.

`exchange` answers the status and the body's start of a 2xx (`post`, the body), or raises:
Redirected (a 3xx), Refused (any other status), TimeoutError (Unresolved, a TimeoutError, when
the host's name was not looked up in time), Untrusted (the server's
certificate did not verify), Unreachable (the connection failed or broke), or Unsendable (the
request could not be made as given: nothing was sent). The caller says what each means; this
module only speaks HTTP, with the standard library.
"""

from __future__ import annotations

import functools
import http.client
import io
import ipaddress
import math
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from email.message import Message
from typing import Any

CHUNK = 64 * 1024  # bytes read or sent at a time, each with the time left
# urllib sends no credentials from a URL's user name and password: it asks the name server for
# "alice:pw@host" as a host's name, each try failing as an outage, the password in every message
# that quoted the URL. What `url_problem` says of one:
USERINFO = (
    "hold no user name or password (before an @): they are not sent as credentials but looked "
    "up as part of the host's name"
)
ERROR_BODY_BYTES = 64 * 1024  # of a refusal, only its start is quoted
# Look-ups of a host's name under way at once, each in a thread of its own. A thread stuck in a
# resolver that never answers cannot be stopped, only left: this many at most are ever left,
# and a call that finds them all taken waits for one within its deadline, as for its answer.
LOOKUPS = 8
_lookups = threading.BoundedSemaphore(LOOKUPS)


class Refused(Exception):
    """The server answered with a status other than 2xx. `body` is its start, as much as
    arrived in time (at most ERROR_BODY_BYTES); `retry_after` is the Retry-After header in
    seconds, when it is a number."""

    def __init__(self, status: int, body: bytes, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.retry_after = retry_after


class Redirected(Exception):
    """The server answered with a redirect (3xx), which is not followed. `location` is where
    it points, made absolute, or None when it did not say."""

    def __init__(self, status: int, location: str | None) -> None:
        super().__init__(f"HTTP {status} to {location}")
        self.status = status
        self.location = location


class Untrusted(Exception):
    """The server's TLS certificate did not verify: `host`'s, for `reason` (as OpenSSL says
    it: a self-signed certificate, an expired one, another host's)."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"{host}: {reason}")
        self.host = host
        self.reason = reason


class Unresolved(TimeoutError):
    """The address of `host` was not looked up by the call's deadline: the system's name
    resolver did not answer in time. A TimeoutError, as a connect that times out is: an
    outage to wait out, not a setting."""

    def __init__(self, host: str) -> None:
        super().__init__(f"looking up the address of {host} did not finish in time")
        self.host = host


class Unreachable(Exception):
    """No answer: the connection was refused, reset or dropped. The message says how."""


class Unsendable(Exception):
    """The request cannot be made as given: its URL is not one HTTP can ask (`url_problem`),
    or a header's value is not one HTTP can carry (then `header` names it; its value is never
    said, as it is often a credential). Nothing was sent, and no later try would go otherwise,
    so this is a setting to change, not a server that did not answer."""

    def __init__(self, message: str, header: str | None = None) -> None:
        super().__init__(message)
        self.header = header


def header_problem(value: str) -> str | None:
    """What in a header's value no request can carry, or None: a line break (http.client
    refuses it, quoting the value in its ValueError), another control character (sent as it
    is, NUL and all), or a character outside Latin-1 (UnicodeEncodeError)."""
    if "\n" in value or "\r" in value:
        return "a line break"
    if any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
        return "a control character"
    if any(ord(c) > 0xFF for c in value):
        return "a character outside Latin-1"
    return None


def url_problem(url: str) -> str | None:
    """What stops `url` from being asked, said to follow "... must", or None. The one check of
    an address, made where a setting is read and again before each request: a URL with no
    host, a port that is no number or a space in it was found only as the request was made,
    and said as a connection that failed, so a typo was waited out as an outage."""
    if not url.isascii() or not url.isprintable() or " " in url:
        # http.client refuses these only as it sends, or sends an international name where
        # it means another: say it once, here.
        return (
            "hold no space, control character or character outside ASCII (a host's "
            "international name in its xn-- form, the rest %-escaped)"
        )
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # chiefly "Invalid IPv6 URL": a bracket left open or stray
        return "be a URL (an IPv6 address goes whole in brackets, as http://[::1]:8080/v1)"
    if parts.scheme not in ("http", "https"):
        return "start with http:// or https://"
    if "@" in parts.netloc:
        return USERINFO
    if not parts.hostname:
        return "name a host after its scheme (as http://127.0.0.1:8080/v1)"
    try:
        port = parts.port
    except ValueError:  # not a number, or past 65535
        port = 0
    if port == 0:
        return "have a port from 1 to 65535 after its host's colon (or no colon: the scheme's own)"
    return None


def post(url: str, data: bytes, headers: Mapping[str, str], timeout: float, limit: int) -> bytes:
    """POST `data` to `url` and answer the body of a 2xx: at most `limit` + 1 bytes (one more
    than `limit` says it is longer). The whole call takes at most `timeout` seconds."""
    return exchange(url, data, headers, timeout, limit)[1]


def exchange(
    url: str, data: bytes, headers: Mapping[str, str], timeout: float, limit: int
) -> tuple[int, bytes]:
    """`post`, answering the 2xx's status with its body's start. The connection is closed
    after `limit` + 1 bytes, however long the body says it is."""
    if (problem := url_problem(url)) is not None:
        raise Unsendable(f"the URL must {problem}")
    for name, value in headers.items():
        if (problem := header_problem(value)) is not None:
            # Its value is not said: the header is most often a credential (Authorization).
            raise Unsendable(f"the {name} header holds {problem}, which HTTP cannot carry", name)
    ends = time.monotonic() + timeout
    request = urllib.request.Request(url, data=data, headers=dict(headers), method="POST")
    opener = urllib.request.build_opener(_Plain(ends), _Secure(ends), _NoRedirects())
    try:
        with _opened(opener, request, timeout) as response:
            return response.status, _read(response, limit + 1)
    except urllib.error.HTTPError as error:
        with error:
            if 300 <= error.code < 400:
                location = error.headers.get("Location") if error.headers else None
                where = urllib.parse.urljoin(url, location) if location else None
                raise Redirected(error.code, where) from None
            # A status with no words (they did not come in time) is still the status.
            body = _read(error.fp, ERROR_BODY_BYTES, quietly=True)
        raise Refused(error.code, body, retry_after(error.headers)) from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, Unresolved):
            raise error.reason from None
        if isinstance(error.reason, TimeoutError):
            raise TimeoutError(str(error.reason)) from None
        if isinstance(error.reason, ssl.SSLCertVerificationError):
            raise _untrusted(url, error.reason) from None
        raise Unreachable(str(error.reason)) from None
    except TimeoutError:
        raise
    except ssl.SSLCertVerificationError as error:
        raise _untrusted(url, error) from None
    except http.client.InvalidURL as error:
        # What url_problem missed and http.client would not ask; its words quote the URL.
        raise Unsendable(f"the URL is not one HTTP can ask ({type(error).__name__})") from None
    except (http.client.HTTPException, OSError) as error:
        # A server that drops the connection mid-answer (RemoteDisconnected, reset, ...).
        raise Unreachable(f"{type(error).__name__}: {error}") from None


def _opened(
    opener: urllib.request.OpenerDirector, request: urllib.request.Request, timeout: float
) -> Any:
    """The response to `request`. What http.client refuses to send it refuses with a ValueError
    (UnicodeEncodeError too) that quotes it, and a header's value is often a credential: said
    by its kind alone. Not an outage either: nothing was sent."""
    try:
        return opener.open(request, timeout=timeout)
    except ValueError as error:
        raise Unsendable(f"the request could not be made ({type(error).__name__})") from None


def _untrusted(url: str, error: ssl.SSLCertVerificationError) -> Untrusted:
    """A certificate that did not verify is not an outage: no later try will find it trusted."""
    host = urllib.parse.urlsplit(url).hostname or url
    return Untrusted(host, error.verify_message or str(error))


def retry_after(headers: Message | None) -> float | None:
    """Retry-After in seconds, or None when absent, an HTTP date, or nonsense."""
    if headers is None:
        return None
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None  # an HTTP date: rare from these servers, so fall back to our own backoff
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def _read(response: Any, limit: int, quietly: bool = False) -> bytes:
    """At most `limit` bytes of the body, one socket read at a time, each ending by the
    deadline. `quietly`, a read that fails ends the body: what arrived is kept."""
    pieces: list[bytes] = []
    size = 0
    try:
        while size < limit:
            piece = response.read1(min(CHUNK, limit - size))
            if not piece:
                # read1 answers nothing both at the body's end and where the server closed
                # the connection (FIN) short of the length its headers gave (read() alone
                # raises IncompleteRead): a body cut short read as whole was "not JSON", a
                # failure of the model's for good, where a reset mid-body is an outage.
                missing = getattr(response, "length", None)
                if missing and not quietly:
                    raise Unreachable(
                        f"the connection closed after {size} of the {size + missing} bytes "
                        "its Content-Length announced"
                    )
                break
            pieces.append(piece)
            size += len(piece)
    except (OSError, http.client.HTTPException):
        if not quietly:
            raise
    return b"".join(pieces)


# --- the deadline, down to the socket ----------------------------------------------------------


def addresses(host: str, port: int, ends: float) -> list[Any]:
    """getaddrinfo's answer for `host` (stream sockets), by `ends`; Unresolved when the
    resolver has not answered by then.

    The look-up runs in a thread of its own, which the call waits for no longer than its time
    left: a resolver that hangs keeps that thread, not the worker. The thread ends when the
    resolver answers at last; until then it holds one of LOOKUPS places. An address written
    as one (127.0.0.1, ::1) is no look-up: it is read here, at once."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    places = _lookups  # the one released, whatever the module holds by then
    if not places.acquire(timeout=max(ends - time.monotonic(), 0)):
        raise Unresolved(host)
    answer: list[Any] = []
    failed: list[BaseException] = []
    done = threading.Event()

    def look_up() -> None:
        try:
            answer.extend(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
        except BaseException as error:  # handed to the caller, who says it
            failed.append(error)
        finally:
            places.release()
            done.set()

    # A daemon: one the resolver never lets go of must not hold the process at its exit.
    threading.Thread(target=look_up, name=f"look up {host}", daemon=True).start()
    if not done.wait(max(ends - time.monotonic(), 0)):
        raise Unresolved(host)
    if failed:
        raise failed[0]
    return answer


def _left(ends: float) -> float:
    """Seconds until `ends`; TimeoutError when it has passed (a timeout of 0 would not wait
    at all, but turn the socket non-blocking)."""
    left = ends - time.monotonic()
    if left <= 0:
        raise TimeoutError("the call's time ran out")
    return left


class _Until(io.RawIOBase):
    """A socket's reads (its SocketIO), each waiting at most until `ends`."""

    def __init__(self, sock: socket.socket, raw: Any, ends: float) -> None:
        self.sock = sock
        self.raw = raw
        self.ends = ends

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        self.sock.settimeout(_left(self.ends))
        read: int | None = self.raw.readinto(buffer)
        return read

    def close(self) -> None:
        self.raw.close()  # the socket's own file: the socket closes with the last of them
        super().close()


def _responses_until(ends: float) -> type[http.client.HTTPResponse]:
    """An HTTPResponse class whose reads (status line, headers, body) end by `ends`."""

    class Response(http.client.HTTPResponse):
        def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            # Nothing is read yet: the socket's file goes under a reader that caps each read.
            self.fp = io.BufferedReader(_Until(sock, self.fp.detach(), ends))

    return Response


class _Timed(http.client.HTTPConnection):
    """A connection whose connect, sends and reads all end by `ends` (monotonic seconds)."""

    def __init__(self, host: str, *, ends: float, **options: Any) -> None:
        super().__init__(host, **options)
        self.ends = ends
        self._create_connection = self._connect_in_time
        self.response_class = _responses_until(ends)

    def _connect_in_time(
        self, address: tuple[str, int], timeout: Any = None, source: Any = None
    ) -> socket.socket:
        """A socket connected to one of the addresses of `address`'s host, tried in the order
        the resolver gave them (as socket.create_connection does), each by the deadline.
        Only the socket is made here: the request's Host header and, over TLS, the name the
        certificate is checked against (and sent as SNI) are still the connection's host,
        the name, never the address it was found at."""
        host, port = address
        failures: list[OSError] = []
        for family, kind, protocol, _, where in addresses(host, port, self.ends):
            left = _left(self.ends)  # raised as it is: the time is up, not this address
            sock = socket.socket(family, kind, protocol)
            try:
                sock.settimeout(left)
                if source:
                    sock.bind(source)
                sock.connect(where)
                # What is left now, not at the start: a TLS handshake takes the socket's
                # timeout as its whole budget.
                sock.settimeout(_left(self.ends))
            except OSError as failure:
                sock.close()
                failures.append(failure)
                continue
            return sock
        # The first address's failure, as socket.create_connection says it.
        raise failures[0] if failures else OSError(f"no address found for {host}")

    def send(self, data: Any) -> None:
        if not isinstance(data, bytes | bytearray):
            super().send(data)
            return
        view = memoryview(data)
        for start in range(0, max(len(view), 1), CHUNK):
            if self.sock is not None:
                self.sock.settimeout(_left(self.ends))
            super().send(view[start : start + CHUNK])


class _TimedSecure(_Timed, http.client.HTTPSConnection):
    """_Timed over TLS (the default context: the system's trusted authorities)."""


class _Plain(urllib.request.HTTPHandler):
    def __init__(self, ends: float) -> None:
        super().__init__()
        self.ends = ends

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_Timed, ends=self.ends), req)


class _Secure(urllib.request.HTTPSHandler):
    def __init__(self, ends: float) -> None:
        super().__init__()
        self.ends = ends

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_TimedSecure, ends=self.ends), req)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: each 3xx comes back as the HTTPError it is."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Message,
        newurl: str,
    ) -> urllib.request.Request | None:
        return None
