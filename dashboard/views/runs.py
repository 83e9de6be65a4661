"""Pages about runs: the list, a run's page and its tabs, starting and steering runs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import DurationField, ExpressionWrapper, F, Q, QuerySet
from django.db.models.functions import Coalesce, Now
from django.http import (
    HttpResponse,
    HttpResponseNotFound,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRefresh, HttpResponseStopPolling

from dashboard import errors, present
from dashboard.access import HtmxHttpRequest, can_decide, can_steer, get_run_for_user, require_steer
from dashboard.downloads import attachment
from dashboard.forms import NewRunForm
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import (
    AuditEntry,
    BillLine,
    Finding,
    RunState,
    RunSummary,
    StoredEvent,
    ThreadMessage,
)
from journal_store.transfer import export_lines
from runtime import flight, otel, status
from runtime.teams import TEAMS
from runtime.views import Bill
from tasks import runs
from tasks.control import stalled

PAGE = 50
EVENTS_PAGE = 50
SORTS = {
    "started": "-started_at",
    "oldest": "started_at",
    "status": "status",
    "tokens": "-tokens",
    "findings": "-findings_count",
    "duration": "-duration",
}
TABS = ("timeline", "threads", "bill", "audit", "findings")


def mark_stalled(rows: Iterable[RunSummary]) -> None:
    """Set `stalled_since` (a datetime, or None) on each run: a running run that nobody drives
    and no step is on its way to. It depends on the clock, so it is worked out when shown."""
    rows = list(rows)
    running = {
        r.run_id: r.started_at.timestamp() if r.started_at else 0.0
        for r in rows
        if status.is_active(r.status)
    }
    since = stalled(running)
    for run in rows:
        at = since.get(run.run_id)
        run.stalled_since = datetime.fromtimestamp(at, UTC) if at is not None else None  # type: ignore[attr-defined]


def parse_date(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


def filtered_runs(params: Any) -> tuple[QuerySet[RunSummary], dict[str, Any]]:
    """The runs the list shows, and the filters as understood (bad dates are ignored)."""
    qs = RunSummary.objects.all()
    chosen = {
        "status": params.get("status", ""),
        "team": params.get("team", ""),
        "since": parse_date(params.get("since")),
        "until": parse_date(params.get("until")),
        "q": params.get("q", "").strip(),
        "sort": params.get("sort", "started") if params.get("sort") in SORTS else "started",
    }
    if chosen["status"]:
        qs = qs.filter(status=chosen["status"])
    if chosen["team"]:
        qs = qs.filter(team=chosen["team"])
    if chosen["since"]:
        qs = qs.filter(started_at__date__gte=chosen["since"])
    if chosen["until"]:
        qs = qs.filter(started_at__date__lte=chosen["until"])
    if chosen["q"]:
        qs = qs.filter(Q(task__icontains=chosen["q"]) | Q(run_id__icontains=chosen["q"]))
    if chosen["sort"] == "duration":
        # Computed per row (SQLite has no interval type): only when sorting needs it.
        qs = qs.annotate(
            duration=ExpressionWrapper(
                Coalesce(F("finished_at"), Now()) - F("started_at"), output_field=DurationField()
            )
        )
    return qs.order_by(SORTS[chosen["sort"]], "-run_id"), chosen


@login_required
@require_GET
def run_list(request: HtmxHttpRequest) -> HttpResponse:
    projection.catch_up(wait=False)
    qs, chosen = filtered_runs(request.GET)
    page = Paginator(qs, PAGE).get_page(request.GET.get("page"))
    mark_stalled(page.object_list)
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "chosen": chosen,
        "query": query.urlencode(),
        "statuses": status.STATUSES,
        "teams": sorted(TEAMS),
        "sorts": list(SORTS),
    }
    template = (
        "dashboard/_run_table.html"
        if request.htmx and request.htmx.target == "runs"
        else "dashboard/run_list.html"
    )
    return render(request, template, context)


@login_required
@require_GET
def run_row(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """One row of the list, polled while the run is active; stops the polling once it is not."""
    run = get_run_for_user(request.user, run_id)
    run.duration = None  # type: ignore[attr-defined]
    mark_stalled([run])
    response = render(request, "dashboard/_run_row.html", {"run": run})
    if not status.is_active(run.status):
        response.status_code = HttpResponseStopPolling.status_code
    return response


def answer_of(run_id: str) -> dict[str, Any] | None:
    """The answer a run composed (fan-out teams), as journalled: text, degraded, sources."""
    data = (
        StoredEvent.objects.filter(run_id=run_id, kind="AnswerComposed")
        .order_by("-position")
        .values_list("data", flat=True)
        .first()
    )
    return json.loads(data) if data else None


def unsandboxed(run_id: str) -> bool:
    """Whether the run was started with the sandbox turned off (MINUTES_SANDBOX=off)."""
    data = (
        StoredEvent.objects.filter(run_id=run_id, kind="TeamStarted")
        .order_by("position")
        .values_list("data", flat=True)
        .first()
    )
    config = json.loads(data).get("config") if data else None
    return isinstance(config, dict) and config.get("sandbox") is False


def run_context(request: HtmxHttpRequest, run: RunSummary) -> dict[str, Any]:
    mark_stalled([run])
    return {
        "run": run,
        "answer": answer_of(run.run_id),
        "unsandboxed": unsandboxed(run.run_id),
        "active": status.is_active(run.status),
        "spend": present.share(run.spent, run.allowance),
        "duration": present.duration(run.started_at, run.finished_at),
        "can_steer": can_steer(request.user, run),
        "can_decide": can_decide(request.user),
        "tabs": TABS,
    }


@login_required
@require_GET
def run_detail(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_run_for_user(request.user, run_id)
    tab = request.GET.get("tab", "timeline")
    if tab not in TABS:
        tab = "timeline"
    context = run_context(request, run) | {"tab": tab} | tab_context(request, run, tab)
    return render(request, "dashboard/run_detail.html", context)


@login_required
@require_GET
def run_header(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_run_for_user(request.user, run_id)
    response = render(request, "dashboard/_run_header.html", run_context(request, run))
    if not status.is_active(run.status):
        response.status_code = HttpResponseStopPolling.status_code
    return response


@login_required
@require_GET
def run_tab(request: HtmxHttpRequest, run_id: str, tab: str) -> HttpResponse:
    """A tab's content: a partial for htmx, the whole page for a plain link."""
    run = get_run_for_user(request.user, run_id)
    if tab not in TABS:
        # Plain text, and the name is not repeated: whatever was asked for stays out of the page.
        return HttpResponseNotFound(
            f"no such tab; tabs are {', '.join(TABS)}", content_type="text/plain; charset=utf-8"
        )
    if not request.htmx:
        return redirect(f"{reverse('run', args=[run_id])}?{request.GET.urlencode()}&tab={tab}")
    context = run_context(request, run) | {"tab": tab} | tab_context(request, run, tab)
    if request.htmx.target == "tab":  # a filter inside the tab: its content alone
        return render(request, f"dashboard/_tab_{tab}.html", context)
    return render(request, "dashboard/_tabs.html", context)


def tab_context(request: HtmxHttpRequest, run: RunSummary, tab: str) -> dict[str, Any]:
    if tab == "timeline":
        return timeline_context(request, run)
    if tab == "threads":
        lanes: dict[str, list[ThreadMessage]] = {}
        for message in ThreadMessage.objects.filter(run_id=run.run_id).order_by("position"):
            lanes.setdefault(message.task_id, []).append(message)
        return {"lanes": lanes}
    if tab == "bill":
        state = RunState.objects.filter(run_id=run.run_id).values_list("states", flat=True).first()
        bill = Bill().result(state["bill"]) if state else Bill().result(Bill().start())
        lines = list(BillLine.objects.filter(run_id=run.run_id).order_by("agent", "task_id"))
        rows = [(name, row["tokens"]) for name, row in bill["agents"].items()]
        return {"bill": bill, "lines": lines, "chart": present.bar_chart(rows)}
    if tab == "audit":
        return {"entries": AuditEntry.objects.filter(run_id=run.run_id).order_by("position")}
    return {"findings": Finding.objects.filter(run_id=run.run_id).order_by("first_position")}


def timeline_context(request: HtmxHttpRequest, run: RunSummary) -> dict[str, Any]:
    kind, agent = request.GET.get("kind", ""), request.GET.get("agent", "")
    try:
        after = max(0, int(request.GET.get("after", "0")))
    except ValueError:
        after = 0
    qs = StoredEvent.objects.filter(run_id=run.run_id, position__gt=after)
    if kind:
        qs = qs.filter(kind=kind)
    if agent:
        qs = qs.filter(agent=agent)
    rows = list(
        qs.order_by("position").values_list(
            "position",
            "stream",
            "version",
            "kind",
            "agent",
            "task_id",
            "turn",
            "data",
            "recorded_at",
        )[: EVENTS_PAGE + 1]
    )
    more = len(rows) > EVENTS_PAGE
    events = []
    for position, stream, version, kind_, agent_, task, turn, data, at in rows[:EVENTS_PAGE]:
        payload = json.loads(data)
        events.append(
            {
                "position": position,
                "stream": stream,
                "version": version,
                "kind": kind_,
                "agent": agent_,
                "task_id": task,
                "turn": turn,
                "at": at,
                "summary": present.summary(kind_, payload),
                "payload": present.pretty(payload),
                "driving": not stream.startswith("run-"),
            }
        )
    last = events[-1]["position"] if events else after
    return {
        "events": events,
        "more": more,
        "after": after,
        "last": last,
        "kind": kind,
        "agent": agent,
        "kinds": sorted(
            set(StoredEvent.objects.filter(run_id=run.run_id).values_list("kind", flat=True))
        ),
        "agents": sorted(
            a
            for a in set(
                StoredEvent.objects.filter(run_id=run.run_id).values_list("agent", flat=True)
            )
            if a
        ),
        "tail": status.is_active(run.status) and not more,
    }


@login_required
@require_GET
def timeline_tail(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """New events after `after`, polled while the run is active (a live tail)."""
    run = get_run_for_user(request.user, run_id)
    context = run_context(request, run) | timeline_context(request, run)
    response = render(request, "dashboard/_timeline_rows.html", context)
    if not context["tail"]:
        response.status_code = HttpResponseStopPolling.status_code
    return response


@login_required
def new_run(request: HtmxHttpRequest) -> HttpResponse:
    form = NewRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run_id = runs.start_run(
                data["team"],
                data["scenario"],
                by=request.user.get_username(),
                task=data["task"] or None,
                model=data["model"],
                allowance=data["allowance"],
                max_turns=data["max_turns"],
                max_seconds=data["max_seconds"],
                desk={"order_id": data["order"]} if data.get("order") else None,
            )
        except runs.RunError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("run", run_id=run_id)
    status = 400 if request.method == "POST" else 200
    return render(request, "dashboard/new_run.html", {"form": form}, status=status)


def steer(request: HtmxHttpRequest, run_id: str, action: str) -> HttpResponse:
    run = get_run_for_user(request.user, run_id)
    require_steer(request.user, run)
    reason = request.POST.get("reason", "").strip()[:2000]
    try:
        getattr(runs, action)(run_id, request.user.get_username(), reason)
    except runs.RunError as exc:
        context = {"message": str(exc), "level": "error"}
        return render(request, "dashboard/_message.html", context, status=errors.status_for(exc))
    if request.htmx:
        return HttpResponseClientRefresh()
    return redirect("run", run_id=run_id)


@login_required
@require_POST
def interrupt(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    return steer(request, run_id, "interrupt")


@login_required
@require_POST
def resume(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    return steer(request, run_id, "resume")


@login_required
@require_GET
def export(request: HtmxHttpRequest, run_id: str) -> StreamingHttpResponse:
    get_run_for_user(request.user, run_id, fresh=False)
    response = StreamingHttpResponse(export_lines(run_id), content_type="application/x-ndjson")
    response["Content-Disposition"] = attachment(run_id, ".jsonl")
    return response


def otlp_download(run_id: str) -> HttpResponse:
    """The run's journal as an OTLP/JSON trace file, for any OpenTelemetry collector or viewer.
    Callers check who may see the run; the page and the API share this."""
    body = otel.otlp_json(flight.run_records(DjangoJournal(), run_id))
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = attachment(run_id, ".otlp.json")
    return response


@login_required
@require_GET
def export_otlp(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    get_run_for_user(request.user, run_id, fresh=False)
    return otlp_download(run_id)


@login_required
@require_POST
def check_replay(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """Re-run the run from its journal alone and say whether it reproduces every event."""
    get_run_for_user(request.user, run_id, fresh=False)
    try:
        report = flight.replay(DjangoJournal(), run_id)
    except flight.FlightError as exc:
        return render(request, "dashboard/_message.html", {"message": str(exc), "level": "error"})
    if report.identical:
        message = f"identical: all {report.events} events reproduced from the journal alone"
        if not report.complete:
            message += " (the run has not finished)"
        level = "ok"
    else:
        message, level = f"differs {report.difference}", "error"
    return render(request, "dashboard/_message.html", {"message": message, "level": level})
