"""Push a trace to an OTLP/HTTP collector: protobuf POSTed to `<endpoint>/v1/traces`.

Retries what is worth retrying, as the OTLP specification asks (429, 502, 503, 504, and a
connection that failed or timed out), with exponential backoff and jitter, honouring a
Retry-After; anything else (400 for a body it cannot read, 401/403 for bad credentials, 404
for a wrong address) fails at once. Either way the caller gets a PushResult or a PushFailed
that says what happened: it records it (journal_store/traces.py), nothing is dropped silently.

Each POST is over by its timeout, however the collector answers (runtime/http_deadline.py: one
deadline for connecting, sending, the status line, the headers and the body), and reads at most
ANSWER_BYTES of the answer: urllib's own timeout bounded each read, so a collector dripping its
status line held a worker for 37 s with a 2 s timeout, one dripping its body held it for good,
and a 2 GiB answer was read whole into memory. No redirect is followed: urllib sent the
request's headers (the collector's credentials) wherever a 302 pointed, as a GET, and the push
was recorded as delivered.

A collector's answer is quoted in the failure, which is journalled, shown on the run page and
logged; a collector may echo the request's headers (a 401 quoting `Bearer ...`), so every header
value is blanked out of every message (`hidden`), in a refusal's body before it is cut short.

HTTP is stdlib only and confined to `post`, the one outbound seam of this module.
"""

from __future__ import annotations

import random
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from runtime import http_deadline, redact
from runtime.otel.protobuf import PROTOBUF_TYPE

TRACES_PATH = "/v1/traces"
RETRYABLE = frozenset({429, 502, 503, 504})
MAX_BACKOFF = 30.0
ANSWER_BYTES = 4 * 1024  # of a collector's answer only its start is read: it says no more
QUOTED_CHARS = 300  # of a refusal's body, what a message quotes
CHECK = "check MINUTES_OTLP_HEADERS and MINUTES_OTLP_ENDPOINT"
HIDDEN = "[header value hidden]"  # what stands for a header's value in a message that quoted it


class PushFailed(Exception):
    """The collector did not take the trace; `status` is its last HTTP answer, if any."""

    def __init__(self, message: str, status: int | None, attempts: int) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


@dataclass(frozen=True)
class PushResult:
    status: int
    attempts: int


@dataclass(frozen=True)
class Answer:
    """What one POST came back with: a status, or no status and why (connection trouble)."""

    status: int | None
    detail: str
    retry_after: float | None = None
    final: bool = False  # no later try would go otherwise: fail at once


def where(endpoint: str) -> str:
    """The endpoint as it may be recorded and shown: scheme, host and port, nothing else (a
    path or user info could carry a credential)."""
    url = urllib.parse.urlsplit(endpoint)
    host = url.hostname or "?"
    return f"{url.scheme}://{host}:{url.port}" if url.port else f"{url.scheme}://{host}"


def traces_url(endpoint: str) -> str:
    """`<endpoint>/v1/traces`, unless the endpoint already names that path."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith(TRACES_PATH) else endpoint + TRACES_PATH


def post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> Answer:
    """One POST of the body, over by `timeout` seconds; never raises for what the network or
    the collector did."""
    sent = {**headers, "Content-Type": PROTOBUF_TYPE}
    try:
        status, _ = http_deadline.exchange(url, body, sent, timeout, ANSWER_BYTES)
        return Answer(status, f"HTTP {status}")
    except http_deadline.Refused as refused:
        said = quoted(refused.body, headers)
        detail = f"HTTP {refused.status}: {said}" if said else f"HTTP {refused.status}"
        return Answer(refused.status, detail, refused.retry_after)
    except http_deadline.Redirected as moved:
        return Answer(moved.status, redirected(moved))
    except http_deadline.Unresolved as unresolved:
        said = (
            f"the address of the collector's host {unresolved.host} was not looked up within "
            f"{timeout:g} s: the name resolver did not answer"
        )
        return Answer(None, said)
    except TimeoutError:
        return Answer(None, f"the collector did not answer within {timeout:g} s")
    except http_deadline.Untrusted as untrusted:
        # Not an outage: no later try finds the certificate trusted (as the model client says
        # it, f03211a), where it was tried four times with backoff before it was said.
        said = (
            f"the collector's TLS certificate did not verify ({untrusted.host}: "
            f"{untrusted.reason}); trust its authority with SSL_CERT_FILE, or check "
            "MINUTES_OTLP_ENDPOINT"
        )
        return Answer(None, said, final=True)
    except http_deadline.Unreachable as error:
        return Answer(None, f"could not reach the collector: {error}")
    except Exception as error:  # anything else must still end as a failure
        # Chiefly a header value http.client refuses (a newline, a character outside
        # Latin-1): its ValueError or UnicodeEncodeError quotes the value, which may be the
        # credential, so only the exception's kind is said. Escaping here left the push
        # queued for good, with no failure recorded and nothing to retry it.
        return Answer(
            None, f"the request could not be sent ({type(error).__name__}); {CHECK}", final=True
        )


def secrets(headers: Mapping[str, str]) -> list[str]:
    """What to blank: each header's value, and the credential after a scheme word ("Bearer
    <token>": a collector may quote the token alone), longest first, so a value is blanked
    whole before a part of it."""
    found = set()
    for value in headers.values():
        found.add(value)
        found.add(value.strip().rsplit(None, 1)[-1] if value.strip() else value)
    return sorted((v for v in found if redact.secret(v)), key=len, reverse=True)


def hidden(text: str, headers: Mapping[str, str]) -> str:
    """`text` with every header value (and a cut-off start of one) blanked."""
    for value in secrets(headers):
        text = redact.blanked(text, value, HIDDEN)
    return text


def quoted(body: bytes, headers: Mapping[str, str]) -> str:
    """The start of a refusal's body for a message: header values blanked before the cut
    (cutting first could leave most of one), and a start of one the cut left, after it."""
    text = hidden(body.decode("utf-8", errors="replace"), headers)
    text = " ".join(text.split())
    if len(text) > QUOTED_CHARS:
        text = text[:QUOTED_CHARS] + redact.CUT
    return hidden(text, headers)


def redirected(moved: http_deadline.Redirected) -> str:
    """A 3xx, said: not followed (it would take the headers, credentials and all, wherever it
    points), and the address is the setting's to change. Where it points is named by scheme,
    host, port and path: a query could carry a credential."""
    if moved.location is None:
        to = "no Location"
    else:
        url = urllib.parse.urlsplit(moved.location)
        to = f"{where(moved.location)}{url.path}"
    return (
        f"HTTP {moved.status} redirect to {to}, not followed: set MINUTES_OTLP_ENDPOINT to the "
        "collector's own address"
    )


def push(
    body: bytes,
    endpoint: str,
    headers: Mapping[str, str] | None = None,
    *,
    timeout: float = 10.0,
    attempts: int = 4,
    backoff: float = 1.0,
    sleep: Callable[[float], object] = time.sleep,
    rng: random.Random | None = None,
) -> PushResult:
    """POST the protobuf body to the endpoint's /v1/traces; PushFailed after the last try."""
    url = traces_url(endpoint)
    rng = rng or random.Random()
    answer = Answer(None, "not sent")
    for attempt in range(1, attempts + 1):
        answer = post(url, body, headers or {}, timeout)
        # Every message, not only a refusal's quote, before it can reach a PushFailed.
        answer = replace(answer, detail=hidden(answer.detail, headers or {}))
        if answer.status is not None and 200 <= answer.status < 300:
            return PushResult(answer.status, attempt)
        retryable = not answer.final and (answer.status is None or answer.status in RETRYABLE)
        if not retryable:
            raise PushFailed(answer.detail, answer.status, attempt)
        if attempt < attempts:
            delay = min(MAX_BACKOFF, backoff * 2 ** (attempt - 1)) * rng.uniform(0.5, 1.0)
            sleep(min(MAX_BACKOFF, answer.retry_after) if answer.retry_after else delay)
    raise PushFailed(f"gave up after {attempts} attempts: {answer.detail}", answer.status, attempts)
