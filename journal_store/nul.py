"""U+0000 as the read models hold it: U+FFFD, where an event's text held a NUL character.

An agent's output is untrusted and may hold NUL (a model's reply, a tool that read a binary
file); so may an imported journal. The journal keeps the event exactly as written: its `data`
is JSON text, where a NUL is the six characters `\\u0000`, which any text column holds. The
read models cannot: PostgreSQL's jsonb refuses the escape ("unsupported Unicode escape
sequence") and its text refuses the character, so a read model that met one failed on
PostgreSQL alone. Every read model therefore shows U+FFFD in its place, on every database, so
that SQLite and PostgreSQL say the same and a rebuild gives what the catch-ups gave.

Two spellings of one replacement: `json_text` for a journal row's JSON text, as the projectors
read it (journal_store/projection.py `read`: one pass, and a search for the escape first, so a
row without one costs that search alone); `value` for a Python value made from events some
other way (journal_store/refill.py).
"""

from __future__ import annotations

import re
from typing import Any

NUL = "\x00"
REPLACEMENT = "\ufffd"
# A NUL character's escape in JSON text: one whose backslash is not itself escaped, that is,
# preceded by an even number of backslashes. `\\u0000` is an escaped backslash followed by
# the text "u0000", and stays.
ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def json_text(data: str) -> str:
    """JSON text with the escape of each NUL character in its strings (keys too) replaced by
    U+FFFD's."""
    if "\\u0000" not in data:
        return data
    return ESCAPE.sub(r"\1\\ufffd", data)


def text(value: str) -> str:
    """The string with each NUL character replaced by U+FFFD."""
    return value.replace(NUL, REPLACEMENT) if NUL in value else value


def value(found: Any) -> Any:
    """A JSON-able value with each NUL character in its strings (dict keys too) replaced by
    U+FFFD; what holds none is returned as it is."""
    if isinstance(found, str):
        return text(found)
    if isinstance(found, dict):
        return {(text(k) if isinstance(k, str) else k): value(v) for k, v in found.items()}
    if isinstance(found, (list, tuple)):
        return type(found)(value(v) for v in found)
    return found
