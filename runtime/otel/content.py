"""What of a run's content goes into its trace: secrets scrubbed, every piece bounded.

Prompts, answers, tool arguments and results say what the agents did, and may carry what must
not leave the deployment: keys and tokens that a tool printed or a model repeated. Everything
goes through `scrub` before `bound`, so a secret cut in half by the bound is still gone.

The messages follow the GenAI conventions' JSON shapes (`gen_ai.input.messages`,
`gen_ai.output.messages`): a role and parts, a part being text, a tool call or a tool call's
response.
"""

from __future__ import annotations

import json
import re
from typing import Any

REDACTED = "[REDACTED]"

# Compact JSON, as json.dumps(separators=(",", ":"), ensure_ascii=False) writes it; made once,
# since json.dumps with options builds a new encoder at every call (a trace makes thousands).
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str).encode
_COMPACT_STRICT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

# Values of keys that name a credential: `api_key=...`, `"password": "..."`, `token: ...`.
# The match starts at the keyword (a prefix such as `BILLING_` stays as it is): a pattern that
# starts with `[\w.-]*` would try every position of every text, several times slower.
_NAMED = re.compile(
    r"(?i)((?:api[_-]?key|secret|token|password|passwd|authorization|credential)[\w.-]*"
    r"[\"']?\s*[:=]\s*[\"']?)([^\s\"',;}]+)"
)
# Credentials recognizable on their own, whatever surrounds them.
_SHAPED = re.compile(
    r"(?i)\bbearer\s+[a-z0-9._~+/=-]{8,}"  # an HTTP bearer token
    r"|\bsk-[a-z0-9_-]{16,}"  # model vendors' secret keys
    r"|\bmt_[a-z0-9_-]{20,}"  # Minutes' own API tokens (dashboard/models.py)
    r"|\b(?:ghp|gho|ghs|ghu|github_pat)_[a-z0-9_]{20,}"  # source hosts' tokens
    r"|\bxox[abprs]-[a-z0-9-]{10,}"  # chat bots' tokens
    r"|\bAKIA[0-9A-Z]{16}\b"  # cloud access key ids
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)


# `scrub` first looks for substrings without which a pattern cannot match: a substring test is
# far cheaper than a regular expression's scan, and most texts (test output, answers) contain
# none of them. Keep its lists in step with the patterns above.


def _named(match: re.Match[str]) -> str:
    value = match.group(2)
    # A count is not a secret (`"tokens": 120`, `max_tokens=4096`), nor is a word this short.
    if value.isdigit() or len(value) < 6:
        return match.group(0)
    return match.group(1) + REDACTED


def scrub(text: str) -> str:
    """The text with every credential it shows replaced by [REDACTED]."""
    low = text.lower()
    # Spelled out rather than any(...) over the hints: no generator per text.
    if (
        "bearer" in low
        or "sk-" in low
        or "mt_" in low
        or "gh" in low
        or "xox" in low
        or "akia" in low
        or "private key" in low
    ):
        text = _SHAPED.sub(REDACTED, text)
    if (
        "api" in low
        or "secret" in low
        or "token" in low
        or "passw" in low
        or "authorization" in low
        or "credential" in low
    ):
        text = _NAMED.sub(_named, text)
    return text


def bound(text: str, limit: int) -> str:
    """At most `limit` characters of the text, then a note of how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} of {len(text)} characters cut]"


def as_text(value: Any) -> str:
    """A value as it reads in a trace: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return _COMPACT(value)


def clean(value: Any, limit: int) -> str:
    """A value scrubbed and bounded: what one content attribute holds."""
    return bound(scrub(as_text(value)), limit)


# --- the conventions' message shapes -----------------------------------------------------------


def text_message(role: str, text: str, limit: int) -> dict[str, Any]:
    return text_part_message(role, clean(text, limit))


def text_part_message(role: str, cleaned: str) -> dict[str, Any]:
    """A message of one text part, already cleaned."""
    return {"role": role, "parts": [{"type": "text", "content": cleaned}]}


def assistant_message(
    text: str, calls: list[tuple[str, str, Any]], limit: int, finish_reason: str | None = None
) -> dict[str, Any]:
    """A model's answer: its text and its tool calls (id, name, arguments)."""
    cleaned = [(call_id, name, clean(args, limit)) for call_id, name, args in calls]
    message = assistant_parts(clean(text, limit) if text else "", cleaned)
    if finish_reason is not None:
        message["finish_reason"] = finish_reason
    return message


def assistant_parts(text: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A model's answer, its text and its calls' arguments already cleaned."""
    parts: list[dict[str, Any]] = []
    if text:
        parts.append({"type": "text", "content": text})
    for call_id, name, args in calls:
        parts.append({"type": "tool_call", "id": call_id, "name": name, "arguments": args})
    return {"role": "assistant", "parts": parts}


def tool_message(call_id: str | None, response: Any, limit: int) -> dict[str, Any]:
    return tool_response(call_id, clean(response, limit))


def tool_response(call_id: str | None, cleaned: str) -> dict[str, Any]:
    """A tool's response message, its response already cleaned."""
    part = {"type": "tool_call_response", "id": call_id, "response": cleaned}
    return {"role": "tool", "parts": [part]}


def messages_json(messages: list[dict[str, Any]]) -> str:
    return _COMPACT_STRICT(messages)


def message_json(message: dict[str, Any]) -> str:
    """One message as compact JSON: `messages_json` of a list is its messages' texts, joined
    by commas in brackets."""
    return _COMPACT_STRICT(message)


def with_key(text: str, key: str, value: str | None) -> str:
    """A JSON object's text with one more key, last (as if the dict had it last); the text as
    it is when the value is None."""
    if value is None:
        return text
    extra = json.dumps(key, ensure_ascii=False) + ":" + json.dumps(value, ensure_ascii=False)
    return text[:-1] + ("," if text != "{}" else "") + extra + "}"
