"""The pages' polls for what arrived since they were drawn: the runs list's runs started
elsewhere (the API, a command, another tab), a review queue's new items. The mark each page
polls from is worked out here too; what a poll answers is dashboard/arrived.py.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from dashboard import arrived, asked, listing, queries, queue_pages, run_pages
from dashboard.access import HtmxHttpRequest
from dashboard.asked import BadQuery
from journal_store import queues
from journal_store.models import RunSummary


def newest_shown(runs: list[RunSummary], first: bool, chosen: listing.RunFilter) -> datetime | None:
    """The start the list's poll for newer runs counts from: on the first page newest first,
    its first row's (runs without a start are last), which costs no query; else the newest
    the filter selects (2.4 ms on 10,000 runs filtered by team)."""
    if first and chosen.sort == "started":
        return runs[0].started_at if runs else None
    return run_pages.newest_start(chosen)


@login_required
@require_safe
def newer_runs(request: HtmxHttpRequest) -> HttpResponse:
    """Polled by the runs list: how many runs its filter selects that started after the newest
    it showed (`newer_than`), with a link that shows them (dashboard/arrived.py: 204 while
    the count is what the list says). A run started from the API, a command or another tab
    was not in the list until somebody loaded it again."""
    problems = listing.RunFilter.problems(request.GET, listing.LABELS)
    shown = arrived.shown_of(request.GET, problems)
    try:
        mark = asked.moment_of(request.GET, "newer_than")
    except BadQuery as exc:
        problems |= exc.problems
    if problems:
        said = {
            "problems": problems,
            "labels": listing.LABELS,  # said in the runs list, beside its form
            "lead": "Cannot tell whether newer runs started:",
        }
        return render(request, "dashboard/_bad_query.html", said, status=400)
    chosen = listing.RunFilter.of(request.GET)
    query = request.GET.copy()
    for name in ("newer_than", "page", "after", arrived.SHOWN):
        query.pop(name, None)
    count = run_pages.started_since(chosen, mark)
    link = reverse("runs") + (f"?{query.urlencode()}" if query else "")
    return arrived.answer(
        request,
        count,
        shown,
        "newer-runs",
        words=f"{count} run{'s' if count != 1 else ''} started since this list was drawn: "
        f"show {'it' if count == 1 else 'them'}",
        link=link,
        link_target="#runs",
        title="Runs",
    )


def newer_poll(
    queue: queues.Queue, status: str, page: queue_pages.Page, kept: dict[str, str]
) -> str:
    """The address a queue's page of its newest items polls for items opened since it was
    drawn, counted from the newest item it shows (its first: newest first); "" where new
    items would not be shown (a page with newer items above it, the decided ones)."""
    if not page.top or status not in (queues.OPEN, "all"):
        return ""
    after = page.items[0].position if page.items else 0
    return f"{reverse(f'{queue.name}_newer')}?{urlencode(kept | {'after': after})}"


def newer_items(request: HtmxHttpRequest, queue: queues.Queue) -> HttpResponse:
    """Polled by a queue's page: how many open items of the runs it shows were opened after
    its newest (`after`, a position), with a link that shows them; empty when none. A
    reviewer who kept the queue open saw a new conflict or dead letter only on a reload
    (dashboard/arrived.py: 204 while the count is what the page says)."""
    problems: dict[str, str] = {}
    shown = arrived.shown_of(request.GET, problems)
    try:
        _, run, runs, words = asked.queue_filter(queue, request.GET, queue_pages.LABELS)
    except BadQuery as exc:
        problems |= exc.problems
    try:
        after = asked.position_of(request.GET, "after") or 0
    except BadQuery as exc:
        problems |= exc.problems
    if problems:
        said = {
            "problems": problems,
            "labels": queue_pages.LABELS,  # said in the queue's page, beside its form
            "lead": "Cannot tell whether new items arrived:",
        }
        return render(request, "dashboard/_bad_query.html", said, status=400)
    items = queries.queue_items(queue, queues.OPEN, run, runs, wait=False, words=words)
    kept = asked.queue_kept(run, words, runs)
    count = items.filter(position__gt=after).count()
    return arrived.answer(
        request,
        count,
        shown,
        "newer-items",
        words=f"{count} new {NOUNS[queue.name]}{'s' if count != 1 else ''} since this page was "
        f"drawn: show {'it' if count == 1 else 'them'}",
        link=f"{reverse(queue.name)}?{urlencode({'status': queues.OPEN} | kept)}",
        title=TITLES[queue.name],
    )


@login_required
@require_safe
def dead_letters_newer(request: HtmxHttpRequest) -> HttpResponse:
    return newer_items(request, queues.DEAD_LETTERS)


@login_required
@require_safe
def conflicts_newer(request: HtmxHttpRequest) -> HttpResponse:
    return newer_items(request, queues.CONFLICTS)


NOUNS = {"dead_letters": "dead letter", "conflicts": "conflict"}
TITLES = {"dead_letters": "Dead letters", "conflicts": "Claim conflicts"}  # as their pages
