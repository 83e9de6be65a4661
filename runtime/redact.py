"""Blanking a secret out of text that will be journalled, shown or logged.

Shared by the model client's key and the trace push's headers
(runtime/otel/push.py): a server's refusal may quote the credential it was sent, and a quote
cut short may end inside it, so its start is blanked too: cutting a refusal to 500 characters
before blanking once left 40 of a key's 54. A URL is quoted without the user name and password
it may hold (`without_userinfo`). Text for a log line (`for_log`) has those blanked, the user
names and passwords of the URLs anywhere in it, and its control characters escaped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# Shorter secrets are placeholders ("x", "none"): blanking each "x" would garble the message. A
# secret's start of this many characters or more, cut short, is blanked as the secret is.
SECRET_CHARS = 8
CUT = "..."  # how a quote cut short is marked
USERINFO = "***"  # what stands for a URL's user name and password in a message
HIDDEN = "[secret]"  # what stands for a secret in a log line
# A URL's user name and password, anywhere in a text: between its `//` and the last `@` before
# the text's next space (a password may hold `/`, `?` or `:`).
URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)\S*@")


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


def without_userinfo(url: str) -> str:
    """`url` for a message: what it holds before an @ after its `//` (a user name and
    password) reads USERINFO. Cut by hand, not by urlsplit, which raises on some malformed URLs
    (a bracket left open), and through the last @ anywhere after the `//`: a password with a
    `/` or `?` in it ends urlsplit's host early, and would be quoted as a path or a query."""
    scheme, slashes, rest = url.partition("//")
    if not slashes:
        scheme, rest = "", url  # no scheme ("alice:pw@host/v1"): the same, from the start
    if "@" not in rest:
        return url
    return f"{scheme}{slashes}{USERINFO}@{rest.rpartition('@')[2]}"


def escaped(text: str) -> str:
    """`text` on one line: each control character (a line break, a carriage return, an escape
    sequence's start, the Unicode line and paragraph separators) written as its escape, `\\n`
    or `\\x1b`, so that a log line says what it says and nothing that passes for another."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


def for_record(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` fit to be journalled: each of `secrets` blanked (longest first, so a value is
    blanked whole before a part of it) and the user name and password of each URL in it. Its
    line breaks stay: the journal keeps what was said, and the pages escape it."""
    worth = {v for v in secrets if v is not None and secret(v)}
    for value in sorted(worth, key=len, reverse=True):
        text = blanked(text, value, HIDDEN)
    return URL_USERINFO.sub(lambda m: f"{m.group(1)}{USERINFO}@", text)


def for_log(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` fit for a log line: each of `secrets` blanked (longest first, so a value is
    blanked whole before a part of it), the user name and password of each URL in it
    blanked, and its control characters escaped. For text the process did not write itself:
    an exception's message, which a model client or a tool may have filled with a header it
    echoed, a URL it was given, or an agent's words."""
    return escaped(for_record(text, secrets))
