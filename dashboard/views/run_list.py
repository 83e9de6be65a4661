"""The runs list's page: the runs the filters select, a page at a time after a cursor
(dashboard/run_pages.py), with a link to the next page and one back to the first."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from dashboard import asked, listing, run_pages
from dashboard.access import HtmxHttpRequest
from dashboard.asked import BadQuery
from dashboard.views import polls
from dashboard.views.runs import PARTIAL_FOR_HTMX
from services import beat

PAGE = 50
# An address of the list as it was paged by number (a bookmark, a link kept): the first page
# is the first page still, and a later one is named rather than shown as the first.
PAGE_GONE = (
    "the list no longer goes to a page by its number: follow its Next link from the first "
    "page (a page by number read every run before it)"
)


@login_required
@require_safe
@PARTIAL_FOR_HTMX
def run_list(request: HtmxHttpRequest) -> HttpResponse:
    part = bool(request.htmx) and request.htmx.target == "runs"
    # Every value it cannot take, the place in the list with the filters: a bad page was
    # named only once the filters had been mended.
    problems: dict[str, str] = {}
    try:
        chosen = listing.RunFilter.of(request.GET, listing.LABELS)
    except BadQuery as exc:
        problems |= exc.problems
    try:
        if asked.page_of(request.GET) > 1:
            problems["page"] = PAGE_GONE
    except BadQuery as exc:
        problems |= exc.problems
    after = None
    try:  # a place in the order asked for: none to name where the sort is refused
        sort = str(request.GET.get("sort") or "") or "started"
        if "sort" not in problems:
            after = run_pages.Cursor.read(str(request.GET.get("after") or ""), sort)
    except BadQuery as exc:
        problems |= exc.problems
    if problems:
        # No list: why, field by field, and (a whole page) the form with what was typed. To
        # htmx, whose form on the page holds what was typed, the message in the list's place:
        # it swaps a 400 in (templates/base.html) and pushes its address, so a reload says
        # the same.
        return refuse(request, part, problems)
    chose = listing.selection(chosen, fewer_than=listing.PAGE_FEW)
    found = run_pages.page(chose.runs, chosen.sort, after, PAGE, chose.walk)
    listing.mark_stalled(found.runs)
    listing.mark_failing(found.runs)
    listing.mark_stopped(found.runs)
    query = request.GET.copy()
    for name in ("page", "after"):
        query.pop(name, None)
    newer = query.copy()
    if mark := polls.newest_shown(found.runs, after is None, chosen):
        newer["newer_than"] = mark.isoformat()
    context = {
        "runs": found.runs,
        "next": found.next,
        "after": after is not None,
        "chosen": chosen,
        "query": query.urlencode(),
        "newer_query": newer.urlencode(),
        # Said above the list (not in its part, redrawn by each filter): runs that stall now
        # would wait, with no beat queuing them again.
        "beat_silence": None if part else beat.silence(),
        **listing.choices(chosen),
    }
    template = "dashboard/_run_table.html" if part else "dashboard/run_list.html"
    return render(request, template, context | {"part": part})


def refuse(request: HtmxHttpRequest, part: bool, problems: dict[str, str]) -> HttpResponse:
    """The runs list asked with filters it cannot take: 400, the list's part or its page."""
    said = {
        "problems": problems,
        "labels": listing.LABELS,
        "lead": "No runs are listed: these filters cannot be used.",
    }
    if part:
        return render(request, "dashboard/_bad_query.html", said, status=400)
    chosen = listing.RunFilter.understood(request.GET)
    context = said | {
        "chosen": chosen,
        "typed": asked.typed(request.GET, tuple(problems)),
        **listing.choices(chosen),
    }
    return render(request, "dashboard/run_list.html", context, status=400)
