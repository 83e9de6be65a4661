"""The search page: which runs mention some words, and the events that do."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from dashboard import queries
from dashboard.access import HtmxHttpRequest
from journal_store.models import RunSummary
from runtime import streams
from services import search
from services.asked import shown

ID_MAX = 64


@login_required
@require_safe
def search_page(request: HtmxHttpRequest) -> HttpResponse:
    """`?q=…` over every run, `&run=…` within one."""
    query = request.GET.get("q", "").strip()
    run_id = request.GET.get("run", "").strip() or None
    # How many matching events the runs it lists are gathered from: the page says so.
    context: dict[str, object] = {
        "q": query,
        "run_id": (run_id or "")[:ID_MAX],  # as typed, a huge one cut
        "error": "",
        "recent": f"{search.RECENT:,}",
    }
    if run_id is not None and not streams.is_run_id(run_id):
        # Refused before the database reads it (a NUL was PostgreSQL's DataError, a 500).
        context["error"] = f"run: {shown(run_id)} is not a run id ({streams.RUN_ID_RULE})."
        return render(request, "dashboard/search.html", context, status=400)
    if run_id is not None and not RunSummary.objects.filter(run_id=run_id).exists():
        context["error"] = f"There is no run {run_id} to search in."
        return render(request, "dashboard/search.html", context, status=404)
    if not query:
        return render(request, "dashboard/search.html", context)
    try:
        found = context["found"] = search.find(query, run_id)
        context["numbers"] = queries.numbers(hit.position for hit in found.hits)
    except search.BadQuery as exc:
        context["error"] = f"Search: {exc}."
        return render(request, "dashboard/search.html", context, status=400)
    return render(request, "dashboard/search.html", context)
