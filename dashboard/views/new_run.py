"""The new-run form: a team, a scenario and a backend, the scenario's settings prefilled, drawn
again (htmx) when one of the three changes; a valid post starts the run and goes to its page."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from dashboard import actions
from dashboard.access import HtmxHttpRequest
from dashboard.forms import PRESETS, NewRunForm, presets, sent_again_key
from services import runs
from teams import TEAMS


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def new_run(request: HtmxHttpRequest) -> HttpResponse:
    """The form; asked again with its values (htmx, on a change of team, scenario or backend),
    the form for them: the team's scenarios, the scenario's own settings where the person has
    not typed their own."""
    if request.method == "POST":
        form = NewRunForm(request.POST)
    else:
        form = NewRunForm(initial=kept_choices(request.GET))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        choice = {k: v for k, v in data.items() if k not in ("presets_of", "sent_from")}
        try:
            begun = actions.NewRun(**choice).start(
                request.user.get_username(), sent_again_key(data["sent_from"], choice)
            )
        except runs.RunError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("run", run_id=begun.run_id)
    code = 400 if request.method == "POST" or form.problems else 200
    return render(request, "dashboard/new_run.html", {"form": form}, status=code)


def kept_choices(query: QueryDict) -> dict[str, Any]:
    """What a person chose on the form before it is drawn again: the settings boxes only where
    they differ from the presets they were prefilled with (else the new scenario's own)."""
    kept: dict[str, Any] = {
        k: query[k]
        for k in ("team", "scenario", "task", "model", "order", "baseline", "reflect", "votes")
        if query.get(k)
    }
    shown_for = query.get("presets_of", "").split("/", 1)
    shown = presets(*shown_for) if len(shown_for) == 2 and shown_for[0] in TEAMS else {}
    for name in PRESETS:
        value = query.get(name, "")
        if value and str(shown.get(name)) != value:
            kept[name] = value
    return kept
