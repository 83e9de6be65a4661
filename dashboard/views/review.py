"""The review queues: dead letters (retry or discard) and claim conflicts (choose, or reject
both). Every decision is a journalled human decision; a second decision on the same item gets
a clear "already decided" (409) and writes nothing."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from dashboard.access import HtmxHttpRequest, can_decide, require_decide
from dashboard.forms import DecisionForm, ResolveForm
from journal_store import projection
from journal_store.models import Conflict, DeadLetter
from tasks import review, runs

PAGE = 25


def queue_status(request: HtmxHttpRequest) -> str:
    status = request.GET.get("status", "open")
    return status if status in ("open", "decided", "all") else "open"


@login_required
@require_GET
def dead_letters(request: HtmxHttpRequest) -> HttpResponse:
    projection.catch_up()
    status = queue_status(request)
    qs = DeadLetter.objects.order_by("-position")
    if status == "open":
        qs = qs.filter(status="open")
    elif status == "decided":
        qs = qs.exclude(status="open")
    page = Paginator(qs, PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "dashboard/dead_letters.html",
        {
            "page": page,
            "status": status,
            "can_decide": can_decide(request.user),
        },
    )


@login_required
@require_POST
def decide_letter(request: HtmxHttpRequest, letter_id: str, decision: str) -> HttpResponse:
    if decision not in ("retry", "discard"):
        raise Http404("a dead letter is retried or discarded")
    require_decide(request.user)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "dashboard/_message.html",
            {
                "message": "say why: the reason is recorded in the audit trail",
                "level": "error",
            },
            status=400,
        )
    try:
        runs.decide_letter(
            letter_id, decision, request.user.get_username(), form.cleaned_data["reason"]
        )
    except runs.LetterAlreadyDecided as exc:
        return render(
            request, "dashboard/_message.html", {"message": str(exc), "level": "error"}, status=409
        )
    except runs.RunError as exc:
        return render(
            request, "dashboard/_message.html", {"message": str(exc), "level": "error"}, status=404
        )
    if request.htmx:
        return render(
            request,
            "dashboard/_message.html",
            {
                "message": f"{decision} recorded for {letter_id}",
                "level": "ok",
            },
        )
    return redirect("dead_letters")


@login_required
@require_GET
def conflicts(request: HtmxHttpRequest) -> HttpResponse:
    projection.catch_up()
    status = queue_status(request)
    qs = Conflict.objects.order_by("-position")
    if status == "open":
        qs = qs.filter(status="open")
    elif status == "decided":
        qs = qs.exclude(status="open")
    page = Paginator(qs, PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "dashboard/conflicts.html",
        {
            "page": page,
            "status": status,
            "can_decide": can_decide(request.user),
        },
    )


@login_required
@require_POST
def resolve_conflict(request: HtmxHttpRequest, conflict_id: str) -> HttpResponse:
    require_decide(request.user)
    form = ResolveForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "dashboard/_message.html",
            {
                "message": "choose a claim (or none) and say why",
                "level": "error",
            },
            status=400,
        )
    data = form.cleaned_data
    try:
        review.resolve(conflict_id, data["choice"], request.user.get_username(), data["reason"])
    except (review.ConflictAlreadyDecided, review.ConflictMoved) as exc:
        return render(
            request, "dashboard/_message.html", {"message": str(exc), "level": "error"}, status=409
        )
    except review.ConflictError as exc:
        return render(
            request, "dashboard/_message.html", {"message": str(exc), "level": "error"}, status=400
        )
    if request.htmx:
        return render(
            request,
            "dashboard/_message.html",
            {
                "message": f"resolution recorded for {conflict_id}",
                "level": "ok",
            },
        )
    return redirect("conflicts")
