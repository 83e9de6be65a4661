"""The model client's API key, kept out of everything the client reports.

A failure's message and a reply are journalled for good, shown on pages and exported, and both
may hold the key: a refusal quoting it ("Incorrect API key provided: sk-..."), a gateway that
echoes the request's Authorization header into the reply's "model". Each has the key blanked
(REDACTED) before it leaves the client, and its start too where a quote was cut short inside
it: cutting a refusal to 500 characters before blanking once left 40 of a key's 54.
"""

from __future__ import annotations

import json
from typing import Any

from runtime import redact
from runtime.model import ModelResponse
from runtime.openai_wire import snippet

REDACTED = "[API key hidden]"  # what stands for the key in a message that quoted it
SECRET_CHARS = redact.SECRET_CHARS  # shorter keys are placeholders, left as they are
CUT = redact.CUT


def secret(key: str | None) -> str | None:
    """The key, when it is one worth hiding (not a placeholder some local servers want)."""
    return redact.secret(key)


def blanked(text: str, key: str | None) -> str:
    """`text` with the key blanked wherever it appears, and its start (SECRET_CHARS or more of
    it) where a quote was cut short inside it: at the end of `text`, or before a CUT."""
    return redact.blanked(text, key, REDACTED)


def quoted(body: bytes, key: str | None) -> str:
    """The start of a refusal's body for a message, the key blanked before it is cut short
    (snippet), where cutting first could leave most of it."""
    text = body.decode("utf-8", errors="replace")
    if (key := secret(key)) is not None and key not in text:
        # A JSON body may write the key with escapes ("\/", "\u0073k-..."): quoted as read,
        # the key shows in it, and is blanked.
        try:
            read = json.dumps(json.loads(body), ensure_ascii=False)
        except (ValueError, RecursionError):
            read = ""
        if key in read:
            text = read
    return snippet(blanked(text, key))


def kept_out(response: ModelResponse, key: str | None) -> ModelResponse:
    """`response` with the key blanked in all its text: the reply's text, each call's id, name
    and arguments (keys and strings, at any depth), and what the server said of itself.

    Blanked before it is journalled, so a replay, which serves the recorded reply and asks no
    server, gives the same; a tool given arguments that held the key gets REDACTED there.
    """
    if secret(key) is None:
        return response

    def blank(value: Any) -> Any:
        if isinstance(value, str):
            return blanked(value, key)
        if isinstance(value, list):
            return [blank(item) for item in value]
        if isinstance(value, dict):
            return {blanked(k, key): blank(v) for k, v in value.items()}
        return value

    calls = [
        call.model_copy(
            update={"id": blank(call.id), "name": blank(call.name), "args": blank(call.args)}
        )
        for call in response.tool_calls
    ]
    served = response.served
    if served is not None:
        said = ("model", "response_id", "finish_reason")
        served = served.model_copy(update={f: blank(getattr(served, f)) for f in said})
    return response.model_copy(
        update={"text": blank(response.text), "tool_calls": calls, "served": served}
    )
