"""Text that changes the order it is shown in is shown as what it is.

A right-to-left override (U+202E) in an agent's task, a model's answer or a reason makes
"evil\u202eexe.txt" read "eviltxt.exe", and "\u202eexe.live" read "evil.exe": in an audit
trail, what a reader sees must be what was written. Every page's HTML has each such control
character (the embeddings, overrides and isolates; never in our own templates) written as its
name in brackets, "[U+202E]", where the text stood: plain text, so it is as safe in an
attribute as between tags. The JSON of the API and the files exported keep the characters as
they were: there they are data, not shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from runtime.terminal import BIDI

# terminal.BIDI's characters as UTF-8 (the page's encoding), so one pass over the page's bytes
# finds them, with nothing decoded.
CONTROLS = re.compile(
    b"|".join(chr(c).encode() for c in range(0x2000, 0x2100) if re.match(f"[{BIDI}]", chr(c)))
)


def _named(found: re.Match[bytes]) -> bytes:
    return f"[U+{ord(found.group().decode()):04X}]".encode()


def shown(content: bytes) -> bytes:
    """The page with every such character written as its name."""
    return CONTROLS.sub(_named, content)


class BidiShownMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        html = response.get("Content-Type", "").startswith("text/html")
        if html and not response.streaming:
            named = shown(response.content)
            if len(named) != len(response.content):
                response.content = named
                if response.has_header("Content-Length"):  # set within (CommonMiddleware)
                    response["Content-Length"] = str(len(named))
        return response
