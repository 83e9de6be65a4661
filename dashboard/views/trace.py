"""The run page's trace tab: a window of the run's calls in lanes, and one call opened as a chat.

The URL says what is shown: `after` (the window after that position), `latest=1` (the last
window), `call` (the call opened by the event at that position, shown below the drawing; the
window around it unless `after` says otherwise). Bars link to their call with plain links, so
they work from the keyboard and without scripts.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from dashboard import asked, queries, trace, trace_draw
from dashboard.access import HtmxHttpRequest
from journal_store.models import RunSummary
from runtime import status


def number(request: HtmxHttpRequest, name: str) -> int | None:
    """A position the URL carries; BadQuery when it is no number (asked.position_of)."""
    return asked.position_of(request.GET, name)


def context(request: HtmxHttpRequest, run: RunSummary) -> dict[str, Any]:
    """The trace tab's window, its drawing, its neighbours' links and the opened call."""
    run_id = run.run_id
    opened = number(request, "call")
    after = number(request, "after")
    latest = asked.flag_of(request.GET, "latest") and after is None
    if after is None and opened is not None:
        after = trace.around(run_id, opened)
    found = trace.window(run_id, after or 0, latest=latest, size=trace.WINDOW)
    shown_after = found.first - 1 if found.first else (after or 0)
    view = found.view(run_id, queries.event_agents(run_id), status.is_active(run.status))
    page = reverse("run", args=[run_id])

    tab = reverse("run_tab", args=[run_id, "trace"])

    def link(**fields: Any) -> dict[str, str]:
        """A link to another window: the page's URL, and the tab's for htmx."""
        query = urlencode(fields)
        return {"href": f"{page}?tab=trace&{query}", "hx": f"{tab}?{query}"}

    call_href = f"{page}?tab=trace&after={shown_after}&call={{}}#call"
    read = trace.Readable()  # the call's rows no event model reads: said beside it
    opened_call = trace.call(run_id, opened, journal=read) if opened is not None else None
    return {
        "drawing": trace_draw.drawing(view, call_href),
        "window": found,
        "numbers": found.numbers(run_id),
        "earlier": None if found.earlier is None else link(after=found.earlier),
        "later": None if found.later is None else link(after=found.later),
        "first_link": link(after=0),
        "latest_link": link(latest=1),
        "call": opened_call,
        "call_asked": opened,
        "call_unreadable": read.said(),
        "call_latency": trace_draw.latency_text(opened_call.end - opened_call.start)
        if opened_call
        else "",
        "call_at": trace_draw.Scale(0, 1, view.run_start).since(opened_call.start)
        if opened_call
        else "",
        "close_call": link(after=shown_after),
    }
