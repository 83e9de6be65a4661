"""Pages about runs: a run's page and its tabs, a row of the list, steering runs (the list is
dashboard/views/run_list.py, the new-run form dashboard/views/new_run.py).

What they read and do is built in dashboard/queries.py and dashboard/actions.py, which the API
shares; these views only choose templates.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, HttpResponseNotFound, QueryDict, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRefresh, HttpResponseStopPolling

from dashboard import actions, asked, downloads, errors, listing, present, queries
from dashboard.access import (
    UNFOLDED,
    HtmxHttpRequest,
    can_decide,
    can_steer,
    get_run_for_user,
    require_steer,
    run_or_unfolded,
)
from dashboard.asked import BadQuery
from dashboard.tell import tell
from dashboard.views import trace, trace_push
from dashboard.waiting import with_counts
from journal_store.models import RunSummary
from runtime import fork, status
from runtime.events import EventFormatError
from runtime.metrics import DEFINITIONS, title
from services import baseline as baselines
from services import beat, forks, runs, tags, traces
from services.steps import longest_wait

EVENTS_PAGE = 50
TAB_PAGE = 100  # messages or audit entries on one page of their tab
SAID = ("value", "reason", "unit")  # a metric's keys its tab shows in their own columns
TABS = ("timeline", "trace", "threads", "bill", "audit", "findings", "metrics")
# The list's and a tab's addresses answer htmx with a part of the page, and the filters push
# them into the address bar: a browser going Back to one after a reload must not take that
# part from its cache for the whole page.
PARTIAL_FOR_HTMX = vary_on_headers("HX-Request")


@login_required
@require_safe
def run_row(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """One row of the list, polled while the run is active; stops the polling once it is not."""
    run = get_run_for_user(request.user, run_id)
    listing.mark_stalled([run])
    listing.mark_failing([run])
    listing.mark_stopped([run])
    response = render(request, "dashboard/_run_row.html", {"run": run})
    if not status.is_followed(run.status):
        response.status_code = HttpResponseStopPolling.status_code
    return response


def origin_of(run_id: str) -> dict[str, Any] | None:
    """Where an imported run came from, as the header shows it (None: flown here)."""
    found = queries.origin(run_id)
    if found is None:
        return None
    return {"file": found.file, "by": found.by, "at": datetime.fromtimestamp(found.t, UTC)}


def run_context(request: HtmxHttpRequest, run: RunSummary) -> dict[str, Any]:
    listing.mark_stalled([run])
    stalled = run.stalled_since is not None  # type: ignore[attr-defined]
    last = beat.last_round() if stalled else None
    # Each fork point as a position of this store (a fork imported from elsewhere names one of
    # the journal it was made in); None when the parent's event is not found here. A fork read
    # from a file says so beside its link: a file can name any run here as its parent (what it
    # says of its forking is the file's word, shown on its own page as such).
    found = queries.forks_of(run.run_id, (run.parent_id, run.fork_at))
    forks, fork_at = found.listed, found.at
    # A fork imported without its parent names a run this store does not hold: no link to it.
    parent_here = bool(run.parent_id) and (
        fork_at is not None or RunSummary.objects.filter(run_id=run.parent_id).exists()
    )
    views_stopped = queries.views_stopped(run.run_id)
    return {
        "run": run,
        "answer": queries.answer(run.run_id),
        "unsandboxed": queries.unsandboxed(run.run_id),
        "origin": origin_of(run.run_id),
        "review": queries.review_items(run.run_id),
        "active": status.is_active(run.status),
        # Said in the header until the run reaches it, where the page kept saying only running.
        "stop": queries.pending_stop(run.run_id) if status.is_active(run.status) else None,
        # Why a running run stands still: its steps failing (the model endpoint down, say),
        # where the page said only running while they were tried again.
        "trouble": queries.trouble(run.run_id) if run.status == status.RUNNING else None,
        # And its specialists on other workers whose model endpoint is down, waited out.
        "down": queries.specialists_down(run.run_id) if run.status == status.RUNNING else [],
        # Its read models that stopped at one of its events (a fold raised on it): the page
        # shows the run as it stood before that event, and says so.
        "stopped": views_stopped,
        "unfolded": run.status == UNFOLDED,  # stopped at its first event: it has no summary
        "stopped_at": queries.numbers(s.position for s in views_stopped),
        # How far apart their steps (starts) are tried again: min(60, 0.75 x STALL_SECONDS).
        "retry_apart": f"{longest_wait():g} s",
        # A stalled run is queued again by the beat: whether one has lately, and when.
        "beat_silence": beat.silence_after(last) if stalled else None,
        "beat_last": last,
        "awaiting": status.is_awaiting(run.status),
        "spend": present.share(run.spent, run.allowance),
        "duration": present.duration(run.started_at, run.finished_at, run.waited),
        "waited": present.span(run.waited.total_seconds()) if run.waited else "",
        "can_steer": can_steer(request.user, run),
        "can_decide": can_decide(request.user),
        "tabs": TABS,
        "trace_push": trace_push.shown(run),
        "forks": forks,
        # Where the run was forked from its parent, and its forks from it, as the timeline
        # numbers those events.
        "lineage": queries.numbers([fork_at, *(at for _, at, _ in forks)]),
        "fork_at": fork_at,
        "parent_here": parent_here,
        "tags": tags.of(run.run_id),
        # The single-agent baseline flown beside a team run, and the other way round: the form
        # says it is linked to the run, and the page named neither.
        "baselines": baselines.baselines_of(run.run_id) if run.team != "solo" else [],
        "baseline_of": baselines.team_run_of(run.run_id) if run.team == "solo" else None,
    }


@login_required
@require_safe
def run_detail(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = run_or_unfolded(request.user, run_id)
    tab = request.GET.get("tab") or "timeline"
    context = run_context(request, run)
    try:
        if tab not in TABS:
            raise BadQuery({"tab": f"{asked.shown(tab)} is no tab; one of {', '.join(TABS)}"})
        context |= {"tab": tab} | tab_context(request, run, tab)
    except BadQuery as exc:
        # The run's page, its tabs to choose from, and why in the tab's place, where it showed
        # the timeline's start for a tab or a position it could not take.
        context |= {"tab": tab if tab in TABS else ""} | not_shown(exc)
        return render(request, "dashboard/run_detail.html", context, status=400)
    return render(request, "dashboard/run_detail.html", context)


def not_shown(exc: BadQuery) -> dict[str, Any]:
    """What a tab says in its place of the values in its address it cannot take."""
    return {
        "problems": exc.problems,
        "lead": "Nothing is shown: the address holds what it cannot take.",
    }


@login_required
@require_safe
def run_header(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_run_for_user(request.user, run_id)
    response = render(request, "dashboard/_run_header.html", run_context(request, run))
    # What a run waits for is decided in the queues, perhaps in another tab: the navigation's
    # counts come with its header (two index seeks), where they stayed as the page was drawn.
    response = with_counts(request, response)
    if not status.is_followed(run.status):
        response.status_code = HttpResponseStopPolling.status_code
    return response


@login_required
@require_safe
@PARTIAL_FOR_HTMX
def run_tab(request: HtmxHttpRequest, run_id: str, tab: str) -> HttpResponse:
    """A tab's content: a partial for htmx, the whole page for a plain link."""
    run = run_or_unfolded(request.user, run_id)
    if tab not in TABS:
        # Plain text, and the name is not repeated: whatever was asked for stays out of the page.
        return HttpResponseNotFound(
            f"no such tab; tabs are {', '.join(TABS)}", content_type="text/plain; charset=utf-8"
        )
    # A plain link, or htmx restoring a page its history cache no longer holds (it asks with
    # HX-Request too, and puts what it gets in place of the whole body): the whole page.
    if not request.htmx or request.htmx.history_restore_request:
        query = request.GET.copy()
        query["tab"] = tab  # once, where a filter's address already named it
        return redirect(f"{reverse('run', args=[run_id])}?{query.urlencode()}")
    inside = request.htmx.target == "tab"  # a filter inside the tab: its content alone
    try:
        found = tab_context(request, run, tab)
    except BadQuery as exc:
        if inside:
            return render(request, "dashboard/_bad_query.html", not_shown(exc), status=400)
        context = run_context(request, run) | {"tab": tab} | not_shown(exc)
        return render(request, "dashboard/_tabs.html", context, status=400)
    context = run_context(request, run) | {"tab": tab} | found
    if inside:
        response = render(request, f"dashboard/_tab_{tab}.html", context)
        if request.htmx.trigger == "timeline-filters":
            # The run page's own address for the filters chosen (the form sends `tab`), in the
            # address bar: htmx put this fragment's there, /runs/X/tabs/timeline?kind=...
            response["HX-Push-Url"] = f"{reverse('run', args=[run_id])}?{request.GET.urlencode()}"
        return response
    return render(request, "dashboard/_tabs.html", context)


def tab_context(request: HtmxHttpRequest, run: RunSummary, tab: str) -> dict[str, Any]:
    if tab == "timeline":
        return timeline_context(request, run)
    if tab == "trace":
        return trace.context(request, run)
    if tab == "threads":
        after = position_after(request)
        found = queries.messages(run.run_id, after, limit=TAB_PAGE + 1)
        lanes: dict[str, list[Any]] = {}
        for message in found[:TAB_PAGE]:
            lanes.setdefault(message.task_id, []).append(message)
        page = page_of(found, after)
        cited = [m.position for m in found[:TAB_PAGE]] + [after, page["last"]]
        return {"lanes": lanes, "numbers": queries.numbers(cited)} | page
    if tab == "bill":
        bill = queries.bill(run.run_id, run.status)
        rows = [(name, row["tokens"]) for name, row in bill["agents"].items()]
        return {
            "bill": bill,
            "lines": list(queries.bill_lines(run.run_id)),
            "chart": present.bar_chart(rows),
        }
    if tab == "audit":
        after = position_after(request)
        entries = queries.audit(run.run_id, after, limit=TAB_PAGE + 1)
        page = page_of(entries, after)
        cited = [after, page["last"]]
        for entry in entries[:TAB_PAGE]:
            detail = entry.detail if isinstance(entry.detail, dict) else {}
            effect = detail.get("effect")
            settled = effect.get("settled") if isinstance(effect, dict) else None
            cited += [entry.position, detail.get("approval_position"), settled]
        numbers = queries.numbers(p for p in cited if isinstance(p, int))
        return {"entries": entries[:TAB_PAGE], "numbers": numbers} | page
    if tab == "metrics":
        measured = queries.metrics(run.run_id)
        return {
            "metrics": [
                (name, title(name).full, DEFINITIONS.get(name, ""), m, said(m))
                for name, m in measured.items()
            ]
        }
    findings = list(queries.findings(run.run_id))
    cited = [p for f in findings for p in f.positions if isinstance(p, int)]
    return {"findings": findings, "numbers": queries.numbers(cited)}


def said(metric: dict[str, Any]) -> list[str]:
    """What a metric was computed from, one "name value" each (a list's items joined)."""
    return [
        f"{k} {', '.join(map(str, v)) or 'none' if isinstance(v, list) else v}"
        for k, v in metric.items()
        if k not in SAID and v is not None
    ]


def position_after(request: HtmxHttpRequest) -> int:
    """The `after` parameter: where a page starts (0, the start, when absent; past the end, an
    empty page, however far past); BadQuery when it is not a number."""
    return asked.position_of(request.GET, "after") or 0


def page_of(found: list[Any], after: int) -> dict[str, Any]:
    """Where a page of rows read with one more than TAB_PAGE stands: whether more follow, and the
    position the next page starts after."""
    shown = found[:TAB_PAGE]
    return {
        "after": after,
        "more": len(found) > TAB_PAGE,
        "last": shown[-1].position if shown else after,
        "page_size": TAB_PAGE,
    }


@dataclass(frozen=True)
class TimelineFilter:
    """What the timeline shows, as its URL says: kinds (any number), an agent, and whether
    the driving's lease events are shown (hidden unless asked)."""

    kinds: tuple[str, ...] = ()
    agent: str = ""
    infra: bool = False

    @classmethod
    def of(cls, query: QueryDict, run: RunSummary) -> TimelineFilter:
        """The filter the URL asks for; BadQuery for a kind no event has (the list was empty
        under a Kinds box that, without it, said every kind was shown), or an agent the run
        has none of (it listed no events, as if that agent had done nothing)."""
        kinds = asked.kinds_of(query.getlist("kind"))
        agent = query.get("agent", "")
        if agent and agent not in (agents := queries.event_agents(run.run_id)):
            raise BadQuery({"agent": no_such_agent(agent, agents, status.is_active(run.status))})
        # Every flag its links carry, each refused here if it is none (a tail's or a jump's).
        flags = {name: asked.flag_of(query, name) for name in ("latest", "live", "infra")}
        return cls(kinds, agent, flags["infra"])

    @property
    def hidden_shown(self) -> bool:
        """Whether the driving's lease events are shown: when asked, or when kinds are chosen
        by name. The Kinds list offers every kind the run has, theirs among them, and one
        chosen from it (LeaseGranted) showed "No events match" unless the box was ticked."""
        return self.infra or bool(self.kinds)

    def query(self) -> str:
        """The filter as URL parameters, for the links that keep it (next page, tail, latest)."""
        fields: list[tuple[str, str]] = [("kind", k) for k in self.kinds]
        if self.agent:
            fields.append(("agent", self.agent))
        if self.infra:
            fields.append(("infra", "1"))
        return urlencode(fields)

    def events(self, run_id: str, after: int, limit: int, newest: bool = False) -> list[Any]:
        return queries.events(
            run_id,
            after,
            self.kinds,
            self.agent,
            limit=limit,
            infra=self.hidden_shown,
            newest=newest,
        )


def no_such_agent(agent: str, agents: list[str], active: bool) -> str:
    """Why the timeline cannot show `agent`'s events: the run's agents (so far, running)."""
    said = f"{asked.shown(agent)} is no agent of this run"
    if not agents:
        return f"{said}, which has none yet" if active else f"{said}, which has none"
    return f"{said}; its agents{' so far' if active else ''}: {', '.join(agents)}"


def timeline_rows(request: HtmxHttpRequest, run: RunSummary) -> dict[str, Any]:
    """A page of the timeline's rows after `after`, filtered by kinds, agent and the lease
    toggle; `latest=1`: the last page instead (a jump to the latest)."""
    chosen = TimelineFilter.of(request.GET, run)
    after = position_after(request)
    latest = asked.flag_of(request.GET, "latest")
    if latest:
        rows = chosen.events(run.run_id, 0, EVENTS_PAGE, newest=True)
        more = False
        after = rows[0].position - 1 if rows else 0
    else:
        rows = chosen.events(run.run_id, after, EVENTS_PAGE + 1)
        more = len(rows) > EVENTS_PAGE
    letter = None if (first := forks.first_letter(run.run_id)) is None else first.position
    events = [
        unreadable(e, run.run_id)
        if e.unreadable
        else {
            "position": e.position,
            "number": present.number(e.stream, e.version, run.run_id),
            "stream": e.stream,
            "version": e.version,
            "kind": e.kind,
            "agent": e.agent,
            "task_id": e.task_id,
            "turn": e.turn,
            "at": e.at if e.t > 0 else None,
            "since": present.since(e.t, run.started_at),
            "summary": present.summary(e.kind, e.data),
            "title": present.summary_title(e.kind, e.data),
            "payload": present.pretty(e.data),
            "driving": not e.stream.startswith("run-"),
            # No fork link where no fork can start (a tag, a stop, the verdict, from a dead
            # letter on): it led to a form that refused every fork.
            "forkable": fork.may_follow(e.stream, e.kind, e.position, run.run_id, letter),
        }
        for e in rows[:EVENTS_PAGE]
    ]
    last = events[-1]["position"] if events else after
    # Where the page before this one starts (a jump to the latest, or a link followed, landed
    # here with no way back but to the start).
    earlier = (
        queries.page_before(
            run.run_id, after, EVENTS_PAGE, chosen.kinds, chosen.agent, chosen.hidden_shown
        )
        if after
        else 0
    )
    return {
        "events": events,
        "earlier": earlier,
        "page_size": EVENTS_PAGE,
        "last_number": events[-1]["number"] if events else "",
        "more": more,
        "after": after,
        "last": last,
        "kinds_chosen": chosen.kinds,
        "agent": chosen.agent,
        "infra": chosen.infra,
        "filters": chosen.query(),
        # Followed while a person's decision may move it on too: resumed from its page, it was
        # drawn again before a step took the resume up, and its timeline stood still.
        "tail": status.is_followed(run.status) and not more,
    }


def unreadable(e: queries.EventRow, run_id: str) -> dict[str, Any]:
    """A row no event model reads, as the timeline says it: where, its kind, and why; none of
    its fields (they are what could not be read), no fork from it."""
    return {
        "position": e.position,
        "number": present.number(e.stream, e.version, run_id),
        "stream": e.stream,
        "version": e.version,
        "kind": e.kind,
        "unreadable": e.unreadable,
        "driving": not e.stream.startswith("run-"),
    }


def timeline_context(request: HtmxHttpRequest, run: RunSummary) -> dict[str, Any]:
    """The timeline tab: a page of rows, what its filters offer, and where the run would
    resume from."""
    rows = timeline_rows(request, run)
    return rows | timeline_offers(run, rows)


def timeline_offers(run: RunSummary, rows: dict[str, Any]) -> dict[str, Any]:
    """What the timeline's filters offer (the run's kinds and agents, and the kinds the rows
    were filtered by, which the run may have none of: their box says so, where it said every
    kind over "No events match") and its resume point."""
    return {
        "kinds": sorted({*queries.event_kinds(run.run_id), *rows["kinds_chosen"]}),
        "agents": queries.event_agents(run.run_id),
        "resume": queries.resume_point(run.run_id),
    }


@login_required
@require_safe
def timeline_tail(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """New events after `after`, polled while the run is active (a live tail). Nothing new
    while the run goes on: 204, so htmx swaps nothing and asks again; the poll costs one
    indexed lookup however long the run."""
    run = run_or_unfolded(request.user, run_id)
    try:
        news = TimelineFilter.of(request.GET, run).events(run.run_id, position_after(request), 1)
    except BadQuery as exc:
        # In the rows' place (a table's row), and the polling stops: asking again would not
        # mend the address.
        said = not_shown(exc) | {"row": True}
        return render(request, "dashboard/_bad_query.html", said, status=400)
    if not news and status.is_followed(run.status):
        return HttpResponse(status=204)
    context = {"run": run} | timeline_rows(request, run)
    if context["more"] and asked.flag_of(request.GET, "live"):
        # The live tail's poll (not a "Next" link's) found more than a page since the last
        # (a fast worker, a slow poll), the run going on or ended since: it stays live and
        # asks again at once for the rest, where it used to stop at a "Next" link and leave
        # the page off the run (and its filters as the run began) until someone clicked it.
        context |= {"more": False, "tail": True, "behind": True}
    if not context["tail"] and not status.is_followed(run.status):
        # Its last answer: the run has ended, so the filters' kinds and agents and the resume
        # point drawn when the page opened are redrawn, where they stayed as the run began.
        context |= timeline_offers(run, context) | {"refreshed": True}
    response = render(request, "dashboard/_timeline_rows.html", context)
    if not context["tail"]:
        response.status_code = HttpResponseStopPolling.status_code
    return response


def steer(request: HtmxHttpRequest, run_id: str, action: str) -> HttpResponse:
    run = get_run_for_user(request.user, run_id)
    require_steer(request.user, run)
    try:
        actions.steer(run_id, action, request.user.get_username(), request.POST.get("reason", ""))
    except runs.RunError as exc:
        refused = errors.status_for(exc)
        return tell(request, str(exc), "error", refused, run_url(run_id), "the run")
    except EventFormatError as exc:  # a resume reads the run back
        return tell(request, errors.unreadable(exc), "error", 409, run_url(run_id), "the run")
    if request.htmx:
        return HttpResponseClientRefresh()
    return redirect("run", run_id=run_id)


def run_url(run_id: str) -> str:
    return reverse("run", kwargs={"run_id": run_id})


@login_required
@require_POST
def interrupt(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    return steer(request, run_id, "interrupt")


@login_required
@require_POST
def resume(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    return steer(request, run_id, "resume")


@login_required
@require_safe
def export(request: HtmxHttpRequest, run_id: str) -> StreamingHttpResponse:
    get_run_for_user(request.user, run_id, fresh=False)
    return downloads.journal(run_id)


@login_required
@require_safe
def export_otlp(request: HtmxHttpRequest, run_id: str) -> HttpResponseBase:
    get_run_for_user(request.user, run_id, fresh=False)
    try:
        return downloads.otlp_json(run_id)
    except EventFormatError as exc:  # a trace of every event, or none: not one left out
        return tell(request, errors.unreadable(exc), "error", 409, run_url(run_id), "the run")


@login_required
@require_safe
def export_otlp_protobuf(request: HtmxHttpRequest, run_id: str) -> HttpResponseBase:
    get_run_for_user(request.user, run_id, fresh=False)
    try:
        return downloads.otlp_protobuf(run_id)
    except EventFormatError as exc:
        return tell(request, errors.unreadable(exc), "error", 409, run_url(run_id), "the run")


@login_required
@require_POST
def push_trace(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """Push the run's trace to the collector (again): the retry button of a failed push."""
    run = get_run_for_user(request.user, run_id)
    require_steer(request.user, run, "push its trace")
    if not (traces.enabled() and status.is_terminal(run.status)):
        return tell(
            request, "the trace cannot be pushed now", "error", 409, run_url(run_id), "the run"
        )
    try:
        traces.ask_for_push(run_id, by=request.user.get_username())
    except traces.PushWaiting as exc:
        return tell(request, str(exc), "error", 409, run_url(run_id), "the run")
    if request.htmx:
        return HttpResponseClientRefresh()
    return redirect("run", run_id=run_id)


@login_required
@require_POST
def check_replay(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """Re-run the run from its journal alone and say whether it reproduces every event: for
    whoever may steer the run, since it flies the whole run again inside this request."""
    run = get_run_for_user(request.user, run_id)
    require_steer(request.user, run, "check a replay of it")
    try:
        report = runs.replay(run_id)
    except (runs.RunNotResumable, runs.ReplayTooLong) as exc:
        # Refused, as the API says it (409), where the page answered 200: a script or a
        # monitor reading the status took the refusal for a replay checked.
        status_code = errors.status_for(exc)
        return tell(request, str(exc), "error", status_code, run_url(run_id), "the run")
    except EventFormatError as exc:
        return tell(request, errors.unreadable(exc), "error", 409, run_url(run_id), "the run")
    if report.identical:
        message = f"identical: all {report.events} events reproduced from the journal alone"
        message += report.specialists()
        if not report.complete:
            message += " (the run has not finished)"
        if report.ended_by:
            message += f"; then a person ended it ({report.ended_by})"
        level = "ok"
    else:
        message, level = f"differs {report.difference}", "error"
    return tell(request, message, level, 200, run_url(run_id), "the run")
