"""Push a trace to an OTLP/HTTP collector: protobuf POSTed to `<endpoint>/v1/traces`.

Retries what is worth retrying, as the OTLP specification asks (429, 502, 503, 504, and a
connection that failed or timed out), with exponential backoff and jitter, honouring a
Retry-After; anything else (400 for a body it cannot read, 401/403 for bad credentials, 404
for a wrong address) fails at once. Either way the caller gets a PushResult or a PushFailed
that says what happened: it records it (journal_store/traces.py), nothing is dropped silently.

HTTP is stdlib only and confined to `post`, the one outbound seam of this module.
"""

from __future__ import annotations

import http.client
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from runtime.otel.protobuf import PROTOBUF_TYPE

TRACES_PATH = "/v1/traces"
RETRYABLE = frozenset({429, 502, 503, 504})
MAX_BACKOFF = 30.0


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
    """One POST of the body; never raises for what the network or the collector did."""
    request = urllib.request.Request(
        url, data=body, method="POST", headers={**headers, "Content-Type": PROTOBUF_TYPE}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
            return Answer(response.status, f"HTTP {response.status}")
    except urllib.error.HTTPError as error:
        detail = error.read(300).decode("utf-8", errors="replace").strip().replace("\n", " ")
        retry = error.headers.get("Retry-After") if error.headers else None
        seconds = float(retry) if retry and retry.strip().isdigit() else None
        return Answer(error.code, f"HTTP {error.code}: {detail or error.reason}", seconds)
    except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
        reason = getattr(error, "reason", error)
        return Answer(None, f"could not reach the collector: {reason}")


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
        if answer.status is not None and 200 <= answer.status < 300:
            return PushResult(answer.status, attempt)
        retryable = answer.status is None or answer.status in RETRYABLE
        if not retryable:
            raise PushFailed(answer.detail, answer.status, attempt)
        if attempt < attempts:
            delay = min(MAX_BACKOFF, backoff * 2 ** (attempt - 1)) * rng.uniform(0.5, 1.0)
            sleep(min(MAX_BACKOFF, answer.retry_after) if answer.retry_after else delay)
    raise PushFailed(f"gave up after {attempts} attempts: {answer.detail}", answer.status, attempts)
