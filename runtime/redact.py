"""Blanking a secret out of text that will be journalled, shown or logged.

Shared by the model client's key and the trace push's headers
(runtime/otel/push.py): a server's refusal may quote the credential it was sent, and a quote
cut short may end inside it, so its start is blanked too: cutting a refusal to 500 characters
before blanking once left 40 of a key's 54.
"""

from __future__ import annotations

# Shorter secrets are placeholders ("x", "none"): blanking each "x" would garble the message. A
# secret's start of this many characters or more, cut short, is blanked as the secret is.
SECRET_CHARS = 8
CUT = "..."  # how a quote cut short is marked


def secret(value: str | None) -> str | None:
    """The value, when it is one worth hiding (not a placeholder)."""
    return value if value and len(value) >= SECRET_CHARS else None


def blanked(text: str, value: str | None, stand_in: str) -> str:
    """`text` with `value` replaced by `stand_in` wherever it appears, and its start
    (SECRET_CHARS or more of it) where a quote was cut short inside it: at the end of `text`,
    or before a CUT."""
    value = secret(value)
    if value is None:
        return text
    text = text.replace(value, stand_in)
    start = value[:SECRET_CHARS]
    if start not in text:
        return text
    pieces: list[str] = []
    at = 0
    while (found := text.find(start, at)) >= 0:
        end = found + SECRET_CHARS
        while end < len(text) and end - found < len(value) and text[end] == value[end - found]:
            end += 1
        cut = end == len(text) or text.startswith(CUT, end)
        pieces.append(text[at:found] + stand_in if cut else text[at:end])
        at = end
    pieces.append(text[at:])
    return "".join(pieces)
