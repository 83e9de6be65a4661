"""Tagging a run from its page (the API's POST /api/runs/{id}/tags does the same)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from dashboard.access import HtmxHttpRequest, get_run_for_user
from services import runs, tags

DONE = {"add": "added", "remove": "removed", "add and remove": "added or removed"}


@login_required
@require_POST
def tag_run(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    get_run_for_user(request.user, run_id)
    add = [t for t in request.POST.getlist("add") if t.strip()]
    remove = [t for t in request.POST.getlist("remove") if t.strip()]
    if not add and not remove:
        # The Tag button pressed on an empty box: said, where the page came back unchanged.
        messages.error(request, "No tag was added: the box was blank; type a tag, then Tag.")
        return redirect("run", run_id=run_id)
    try:
        done = tags.tag(run_id, add, remove, request.user.get_username())
    except tags.BadTag as exc:
        messages.error(request, refused(exc))
    except runs.RunError as exc:
        messages.error(request, str(exc))
    else:
        if done.unchanged:  # "Nightly" on a run tagged nightly: why nothing changed
            said = "; ".join(done.unchanged)
            messages.info(request, f"{said[0].upper()}{said[1:]}.")
    return redirect("run", run_id=run_id)


def refused(exc: tags.BadTag) -> str:
    """The refusal as a sentence about the tags the person typed, not the API's field names."""
    named = ", ".join(repr(t) for t in exc.tags)
    subject = f"Tags {named} were" if len(exc.tags) > 1 else f"Tag {named} was"
    return f"{subject} not {DONE.get(exc.field, 'changed')}: {exc.why}."
