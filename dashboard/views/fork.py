"""The fork page: start a new run from one of a run's events, with a person's changes."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from dashboard import asked, errors, present, queries
from dashboard.access import HtmxHttpRequest, get_run_for_user
from dashboard.asked import shown
from dashboard.forking import ForkForm
from runtime import fork
from runtime.events import EventFormatError
from services import forks, runs


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def fork_page(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_run_for_user(request.user, run_id)
    # Read value by value off the index, not from every event of the run (queries.distinct).
    agents = sorted(fork.cast(queries.event_agents(run_id), run.team))
    data = request.POST if request.method == "POST" else None
    at = request.POST.get("at") or request.GET.get("at")
    form = ForkForm(data, agents=agents, initial={"at": at})
    event, number, why = None, "", None
    unreadable = None
    try:
        position = asked.position(at)
        found = None if position is None else forks.event_at(run_id, position)
    except EventFormatError as exc:  # the event asked for is a row no event model reads
        found, unreadable = None, errors.unreadable(exc)
    if unreadable is not None:
        said = {"run": run, "form": None, "at": at, "error": unreadable}
        return render(request, "dashboard/fork.html", said, status=409)
    if found is not None:
        event = found.event
        number = present.number(found.stream, found.version, run_id)
        why = fork.unforkable(found, run_id, forks.first_letter(run_id))
    context = {"run": run, "form": form, "event": event, "at": at, "number": number}
    if found is not None:
        # The line the timeline gives this event, from its payload: the whole event (its id,
        # instant and run) read "id bd330b9a…; t 03:30:36 UTC; run_id r-…", which said nothing.
        context["gist"] = present.summary(found.event.kind, queries.event_row(found).data)
    if why is not None:
        # No form to fill in for a fork that no change could make: why, before anyone types.
        context |= {"error": why, "form": None}
        return render(request, "dashboard/fork.html", context, status=400)
    if event is None:
        choose = "Choose an event of this run to fork at (the Fork link on the timeline)."
        # What was asked and why it cannot be taken, as the API says it, where the page said
        # only "choose an event" to an address that named one.
        if at and not (at.isascii() and at.isdigit()):
            choose = f"at: {asked.not_a_position(at)}. {choose}"
        elif at:
            # As typed (past POSITION_MAX, or '007', quoted): -5 was read as the start (0)
            # and 10**20 as the last position a column holds, and the sentence named those,
            # numbers nobody had asked for.
            typed = at if at == str(asked.position(at)) else shown(at)
            choose = f"at: {asked.no_event_at(run_id, typed)}. {choose}"
        context["error"] = choose
        return render(request, "dashboard/fork.html", context, status=400 if at else 200)
    status = 400 if request.method == "POST" else 200
    if request.method == "POST" and form.is_valid():
        try:
            begun = forks.begin_fork(
                run_id,
                form.cleaned_data["at"],
                form.changes(),
                request.user.get_username(),
                form.key(),
                settings.RUNS_PER_PERSON,  # a fork is a new run of this person's
            )
        except EventFormatError as exc:  # a row of the past it copies reads as no event
            context |= {"error": errors.unreadable(exc), "form": None}
            status = 409
        except runs.RunError as exc:
            form.refused(exc)
            if isinstance(exc, forks.ForkNotWritten | forks.ForkCollided | forks.ForkOfUnreadable):
                # Not the form's fault: the same form sent again may go through (or, for a
                # run whose settings do not validate, no form would).
                status = errors.status_for(exc)
        else:
            return redirect("run", run_id=begun.run_id)
    return render(request, "dashboard/fork.html", context, status=status)
