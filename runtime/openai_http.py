"""The model client's one outbound seam: a POST that is over by a deadline and follows no
redirect (runtime/http_deadline.py, which the trace push shares).

`post` answers the body of a 2xx, or raises: Redirected (a 3xx), Refused (any other status),
TimeoutError, Untrusted (the server's certificate did not verify), or Unreachable (the
connection failed or broke). The client (runtime/openai_client.py) says what each means.
"""

from __future__ import annotations

from runtime.http_deadline import (
    CHUNK,
    ERROR_BODY_BYTES,
    Redirected,
    Refused,
    Unreachable,
    Untrusted,
    post,
    retry_after,
)

__all__ = [
    "CHUNK",
    "ERROR_BODY_BYTES",
    "Redirected",
    "Refused",
    "Unreachable",
    "Untrusted",
    "post",
    "retry_after",
]
