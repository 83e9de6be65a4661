"""What the command line prints is plain text: control characters escaped.

A reason, a finding or an error can quote what a model said, what a tool was named, or what a
journal from elsewhere holds. Printed raw, an escape sequence in it clears the screen, retitles
the window, or shows a link that goes elsewhere than it says (OSC 8); a carriage return
writes over the line before; a bidirectional override shows text in another order than it is.
JSON output escapes them itself; this is for everything else, at the one place it leaves.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

# The bidirectional embeddings, overrides (U+202A-U+202E) and isolates (U+2066-U+2069): text
# shown in another order than it is written (the pages name them too: dashboard/bidi.py).
BIDI = "\u202a-\u202e\u2066-\u2069"
# C0 but the newline and the tab, DEL, C1, and those.
CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}]")


def _escaped(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: str) -> str:
    """`text` with every control character written as its escape (ESC as \\x1b)."""
    return CONTROLS.sub(_escaped, text)


class Plain:
    """A text stream that writes what it is given as plain(): print() to it is safe."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        return self.inner.write(plain(text))

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # flush, fileno, isatty, buffer, encoding...


@contextmanager
def plain_streams() -> Iterator[None]:
    """Standard output and error written as plain text while the block runs."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Plain(out), Plain(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
