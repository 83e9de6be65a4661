"""Text that changes the order it is shown in is shown as what it is.

A right-to-left override (U+202E) in an agent's task, a model's answer or a reason makes
"evil\u202eexe.txt" read "eviltxt.exe", and "\u202eexe.live" read "evil.exe": in an audit
trail, what a reader sees must be what was written. Every page's HTML has each such control
character (the embeddings, overrides and isolates; never in our own templates) written as its
name in brackets, "[U+202E]", where the text stood: in its text, and in the attributes that are
read (a title, a placeholder, a label).

What the page sends back is left as it was written: the text of a <textarea>, a `value` and a
`name` (a form's fields, its hidden ones, a button's), and an address (href, action, hx-get...).
A form drawn again with a Hebrew word between isolates in its task box, "Fix \u2067...\u2069
parser", posts that task, where it posted "Fix [U+2067]...[U+2069] parser" (the run began
with another task than the one typed). A form's box holding one says so under it instead
(dashboard/forms.py BidiNoted). The JSON of the API and the files exported keep the characters
too: there they are data, not shown.

Which is which is read off the page's markup as a browser tokenizes it (WHATWG HTML, 13.2.5):
tags and their attributes, quoted or not; comments; the elements whose text is not markup
(textarea, title, script, style...), each to its own end tag. That is all the pass needs to
know, so it is a few regular expressions rather than a parser, and it reads no further than the
last such character: a 60 KB run page with one at its end takes 2 ms of CPU, where Python's
html.parser took 16. Only a page that holds one is read at all: the others cost one search of
their bytes (0.05 ms for 60 KB), as before.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from runtime.terminal import BIDI

# terminal.BIDI's characters as UTF-8 (the page's encoding): the page is read as bytes,
# nothing decoded.
CONTROLS = re.compile(
    b"|".join(chr(c).encode() for c in range(0x2000, 0x2100) if re.match(f"[{BIDI}]", chr(c)))
)

# The attributes whose text goes back to the server rather than being read on the page.
KEPT = frozenset(
    {
        b"value",
        b"name",
        b"href",
        b"src",
        b"action",
        b"formaction",
        b"hx-get",
        b"hx-post",
        b"hx-put",
        b"hx-patch",
        b"hx-delete",
        b"hx-push-url",
        b"hx-replace-url",
    }
)

# A tag's attributes: a name (anything to a space, "/", ">" or "="), then perhaps "=" and a
# value in double quotes, in single quotes, or bare (to a space or ">"). Spaces are HTML's
# five, not Unicode's (a no-break space is part of a bare value). Possessive throughout: a
# tag that never ends fails at once, not after trying every way to split it.
SPACE = rb"[\t\n\f\r ]"
ATTRIBUTES = (
    rb"(?:[\t\n\f\r /]++|[^\t\n\f\r />][^\t\n\f\r />=]*+(?:" + SPACE + rb"*+=" + SPACE + rb"*+"
    rb"""(?:"[^"]*+"|'[^']*+'|(?!["'])[^\t\n\f\r >]*+))?+)*+"""
)
ATTRIBUTE = re.compile(
    rb"[\t\n\f\r /]*+([^\t\n\f\r />][^\t\n\f\r />=]*+)(?:" + SPACE + rb"*+=" + SPACE + rb"*+"
    rb"""(?:"([^"]*+)"|'([^']*+)'|(?!["'])([^\t\n\f\r >]*+)))?+"""
)
TAG_NAME = re.compile(rb"</?[a-zA-Z][^\t\n\f\r />]*+")
# What a browser reads as markup, each in one match (what is between two matches is text):
MARKUP = re.compile(
    # a comment, to "-->" or "--!>" ("<!-->" and "<!--->" are whole, empty ones);
    rb"<!--(?:-?>|(?:[^-]++|-(?!-!?>))*+(?:--!?>|\Z))"
    # a doctype, a processing instruction or "</" and no name: to the next ">";
    rb"|<(?:[!?]|/(?![a-zA-Z>]))[^>]*+(?:>|\Z)"
    # an element whose text is not markup: its start tag and its text, to its end tag;
    rb"|<(?P<raw>textarea|title|script|style|xmp|iframe|noembed|noframes)(?=[\t\n\f\r />])"
    + ATTRIBUTES
    + rb">(?P<text>(?:[^<]++|<(?!/(?P=raw)[\t\n\f\r />]))*+)"
    # any other tag, start or end.
    rb"|</?[a-zA-Z][^\t\n\f\r />]*+" + ATTRIBUTES + rb">",
    re.IGNORECASE,
)


def kept_spans(page: bytes, controls: list[int]) -> list[tuple[int, int]]:
    """Where in `page` text is sent back, not shown, as (start, end): the textarea texts and
    the kept attributes' values, of the tags that hold one of `controls` (the characters'
    offsets, in order). The page is read up to the last of them only."""
    spans: list[tuple[int, int]] = []
    count, i = len(controls), 0
    for found in MARKUP.finditer(page):
        start, end = found.span()
        while i < count and controls[i] < start:  # in the text before this: shown
            i += 1
        if i == count:
            break
        if controls[i] >= end:
            continue
        if (raw := found.group("raw")) is not None:
            if raw.lower() == b"textarea":
                spans.append(found.span("text"))
            end = found.start("text")  # the start tag's end
        tag = TAG_NAME.match(page, start)
        if tag is None or controls[i] >= end:  # a comment, or only in the element's text
            continue
        at = tag.end()
        while (attribute := ATTRIBUTE.match(page, at, end)) and attribute.end() > at:
            if attribute.group(1).lower() in KEPT:
                value = next((v for v in (2, 3, 4) if attribute.group(v) is not None), None)
                if value is not None:
                    spans.append(attribute.span(value))
            at = attribute.end()
    return spans


def shown(content: bytes) -> bytes:
    """The page with every such character written as its name where it is shown."""
    controls = [found.start() for found in CONTROLS.finditer(content)]
    if not controls:
        return content
    spans = sorted(kept_spans(content, controls))
    starts = [start for start, _ in spans]

    def named(found: re.Match[bytes]) -> bytes:
        at = found.start()
        within = bisect_right(starts, at) - 1
        if within >= 0 and at < spans[within][1]:
            return found.group()
        return f"[U+{ord(found.group().decode()):04X}]".encode()

    return CONTROLS.sub(named, content)


class BidiShownMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        html = response.get("Content-Type", "").startswith("text/html")
        if html and not response.streaming:
            content = response.content
            named = shown(content)
            if named is not content:
                response.content = named
                if response.has_header("Content-Length"):  # set within (CommonMiddleware)
                    response["Content-Length"] = str(len(named))
        return response
