"""The answer of a page's poll for what arrived since the page was drawn: the runs list's runs
started elsewhere and a review queue's new items (views/polls.py).

The page's element polls with nothing shown; the poll carries `shown`, the count the page
says now. While the count is what the page says, the answer is 204, no content: nothing is
swapped, so a screen reader does not hear the same sentence again every 5 s from the live
region, and an idle poll costs no rendering. When the count moved, the sentence comes with a
poller of its own that carries the new count, and the answer stops the poll that asked (286):
one poll at a time, whichever element holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django_htmx.http import HttpResponseStopPolling

from dashboard import asked

SHOWN = "shown"
TEMPLATE = "dashboard/_arrived.html"


def shown_of(params: Mapping[str, Any], problems: dict[str, str]) -> int:
    """The count the page says now (0 when not asked); a value that is none joins `problems`."""
    text = str(params.get(SHOWN) or "0")
    shown = asked.position(text)
    if shown is None:
        problems[SHOWN] = asked.not_a_position(text)
        return 0
    return shown


def answer(request: Any, count: int, shown: int, target: str, **said: Any) -> HttpResponse:
    """204 while `count` is what the page shows; else the sentence (`said`: its words and its
    link) swapped into the element `target`, with the poll that goes on from `count`."""
    if count == shown:
        return HttpResponse(status=204)
    again = request.GET.copy()
    again[SHOWN] = str(count)
    context = {"count": count, "again": f"{request.path}?{again.urlencode()}", "target": target}
    return render(request, TEMPLATE, context | said, status=HttpResponseStopPolling.status_code)
