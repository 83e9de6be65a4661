"""Importing a JSONL journal through the browser.

The body's size was checked before it was read (dashboard/uploads.py); what the file may hold
and do is the importer's to check (journal_store/transfer.py). Whoever imports starts the runs.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from dashboard.access import HtmxHttpRequest
from dashboard.forms import ImportForm
from dashboard.uploads import one_journal
from journal_store import after_import
from journal_store.transfer import ImportRefused, import_journal


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def import_view(request: HtmxHttpRequest) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    context: dict[str, object] = {"form": form}
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            upload = form.cleaned_data["journal"]
            try:
                one_journal(request)
                report = import_journal(
                    upload.file,
                    name=upload.name,
                    size=upload.size,
                    by=request.user.get_username(),
                    allow_torn=form.cleaned_data["allow_torn"],
                )
            except ImportRefused as exc:
                context["problems"] = exc.problems
                context["more"] = exc.more
            else:
                context["note"] = after_import.catch_up()
                context["report"] = report
                # Created only when something was: a file whose events are all here already
                # (an export of a run flown here, a second import) adds nothing.
                status = 201 if report.added else 200
    return render(request, "dashboard/import.html", context, status=status)
