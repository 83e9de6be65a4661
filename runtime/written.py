"""What no text a person or an agent gives us may hold, whichever door it came in by: a control
character other than the tab and the line breaks, and half a UTF-16 surrogate pair. One rule for
every text: a fork's message and tool result (runtime/fork_checks.py), a decision's or a
steering's reason and an intent's words (the pages, the API, the command line, the services).
Before, reasons refused only the NUL and the halves while fork messages refused every control,
so an ESC was journalled in a reason, and shown escaped on the pages, but raw by a terminal.
"""

from __future__ import annotations

import json
import re
from typing import Any

# What no text here may hold: a control character other than the tab and the
# line breaks (a browser's text box sends CRLF), and half a UTF-16 surrogate pair. A NUL ends
# PostgreSQL's text (the API's bodies refuse it anywhere); ESC and the rest are no one's words,
# and steer a terminal that shows them; a lone half is not text, and no event holds it (JSON's
# escapes say it, "\ud800", and so do the bytes of an argument that is not UTF-8).
UNWRITABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
PATH_SHOWN = 8  # steps of a tool result's path a refusal names, the first and the last


def unwritable(value: Any) -> str | None:
    """What the first string in `value` (a text, or JSON read: its keys too, at any depth)
    holds that no text here may, and where; None when nothing. Walked without recursion, its
    path kept as links and written out only for the string at fault."""
    stack: list[tuple[Any, tuple[Any, ...] | None, bool]] = [(value, None, False)]
    while stack:
        item, path, is_key = stack.pop()
        if isinstance(item, str):
            if found := UNWRITABLE.search(item):
                return described(found.group(), found.start(), path, is_key)
        elif isinstance(item, dict):
            for key, inner in reversed(item.items()):
                step = (path, key)
                stack.append((inner, step, False))
                stack.append((key, step, True))
        elif isinstance(item, list):
            stack.extend((inner, (path, i), False) for i, inner in reversed(list(enumerate(item))))
    return None


def described(ch: str, offset: int, path: tuple[Any, ...] | None, is_key: bool) -> str:
    """`ch`, found at `offset` of the string at `path` (a key there, when `is_key`), as a
    refusal says it: what it is, where, and why it may not be."""
    if "\ud800" <= ch <= "\udfff":
        what, why = f"half a UTF-16 surrogate pair (U+{ord(ch):04X} alone)", ", which is not text"
    elif ch == "\x00":
        what, why = "a NUL character (U+0000)", ", which no text here may hold"
    else:
        what = f"a control character (U+{ord(ch):04X})"
        why = "; tabs and line breaks are the only ones text here may hold"
    steps: list[str] = []
    while path is not None:
        path, step = path
        steps.append(f"[{step}]" if isinstance(step, int) else f"[{quoted(step)}]")
    steps.reverse()
    if len(steps) > PATH_SHOWN:
        steps = [*steps[: PATH_SHOWN // 2], "…", *steps[-PATH_SHOWN // 2 :]]
    where = f"character {offset + 1}"
    if steps:
        where = f"{'the key ' if is_key else ''}{''.join(steps)}, {where}"
    return f"holds {what} at {where}{why}"


def quoted(key: str) -> str:
    """A key as JSON writes it (its controls escaped), and short: a key is whatever was sent."""
    text = json.dumps(key)
    return text if len(text) <= 40 else text[:36] + '..."'


REASON_MAX = 2_000  # characters of a stated reason that are kept
NAME_MAX = 150  # characters of a person's name (who stopped, imported): Django's, for users


def reason_refusal(said: str) -> str | None:
    """Why a person's stated reason (a stop's, a resume's, a decision's) cannot be recorded:
    longer than REASON_MAX, or holding what no text here may; None when it can. The same rule
    at every door: the pages, the API, both command lines and a flight's stop file."""
    if len(said) > REASON_MAX:
        return f"the reason is {len(said):,} characters; at most {REASON_MAX:,}"
    return unwritten_reason(said)


def unwritten_reason(text: str, what: str = "reason") -> str | None:
    """Why `text`, a person's words (`what` names them), cannot be recorded; None when it can."""
    if why := unwritable(text):
        return f"the {what} {why}"
    return None
