"""What a page or the API answers while the database does not: a 503 that says so and asks to
try again (with Retry-After), where every page was the 500 "Something went wrong" and the API
a bare 500, as if Minutes had a bug, whenever PostgreSQL restarted or was out of reach.

Only the errors a database that is out of reach or busy raises are answered so (Django's
OperationalError and InterfaceError: a refused or dropped connection, a lock not granted in
time); anything else is a bug and keeps the 500. The database's own words stay in the log,
where Django writes the traceback: they may name hosts and ports nobody signed in should read.
"""

from __future__ import annotations

import logging
import sys

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.views import defaults
from django_htmx.http import reswap

from config.commandline import first_line
from config.health import unmigrated
from services.steps import TRANSIENT

log = logging.getLogger(__name__)

DOWN = TRANSIENT  # what the workers' steps retry too: a database out of reach or busy
API = "/api/"
SENTENCE = (
    "the database did not answer (it may be restarting, out of reach or busy), so this "
    "request could not be finished; try again in a moment"
)
RETRY_AFTER = "5"  # seconds: about what a restarting database takes


def answer(request: HttpRequest) -> HttpResponse:
    """503 with the sentence: the API's JSON under /api/, to htmx what `to_htmx` says, a
    page of its own otherwise. The page has no template logic: drawing the navigation would
    ask the database again."""
    if request.path.startswith(API):
        response: HttpResponse = JsonResponse({"detail": SENTENCE}, status=503)
    elif request.headers.get("HX-Request") == "true":
        response = to_htmx(request, SENTENCE, OUTAGE)
    else:
        response = render(request, "503.html", status=503)
    response["Retry-After"] = RETRY_AFTER
    return response


# What the page's notice says of a poll or a link the database did not answer.
OUTAGE = (
    "The database did not answer (it may be restarting, out of reach or busy), so this page "
    "was not brought up to date: what it shows may be out of date. Its live parts keep "
    "asking; anything else, try again in a moment."
)


def to_htmx(request: HttpRequest, sentence: str, notice: str) -> HttpResponse:
    """A 503 to htmx, which leaves what the page shows as it is.

    A read (a poll, a link, a filter) swaps nothing (HX-Reswap: none) and moves no address:
    a poll inside what it swaps (a run's header, a runs list's row, a timeline's tail)
    was replaced by the sentence, and never asked again once the database was back. The
    page's notice (templates/base.html #outage) says `notice` instead, out of band, with
    the time. A form's post gets `sentence` alone, which its form puts in its own error
    slot (hx-target), so that the form and what was typed in it stay to be sent again."""
    if request.method in ("GET", "HEAD"):
        context = {"notice": notice, "at": timezone.now()}
        response = render(request, "dashboard/_outage.html", context, status=503)
        response = reswap(response, "none")
        response["HX-Push-Url"] = "false"
        return response
    said = {"message": sentence[0].upper() + sentence[1:] + ".", "level": "error"}
    return render(request, "dashboard/_message.html", said, status=503)


NOT_MIGRATED = (
    "the database is not migrated (this code's tables are not all there): run "
    "`manage.py migrate`, then try again"
)


def not_migrated(request: HttpRequest) -> HttpResponse:
    """503 saying the database lacks this code's tables, and what to run: a server started
    before `manage.py migrate` failed every page with a 500 "Something went wrong" and the
    API with an HTML one, or said the database "did not answer" (SQLite's missing table is
    an OperationalError)."""
    if request.path.startswith(API):
        response: HttpResponse = JsonResponse({"detail": NOT_MIGRATED}, status=503)
    elif request.headers.get("HX-Request") == "true":
        # Not the whole page swapped into a run's header or a card, as it was.
        notice = NOT_MIGRATED[0].upper() + NOT_MIGRATED[1:] + "."
        response = to_htmx(request, NOT_MIGRATED, notice)
    else:
        response = render(request, "503_not_migrated.html", status=503)
    response["Retry-After"] = "60"
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """config/urls.py's handler500. Django calls it while handling the exception (after
    logging it), so the exception is at hand: a table missing because `migrate` was not run
    is the 503 that says so; a database out of reach the 503 above; anything else the 500,
    in JSON under /api/ (an HTML page to a script was one more thing to parse)."""
    from django.db import DatabaseError

    exc = sys.exc_info()[1]
    not_an_outage = isinstance(exc, DatabaseError) and not isinstance(exc, DOWN)
    if (not_an_outage or _missing_table(exc)) and unmigrated():
        return not_migrated(request)
    if isinstance(exc, DOWN):
        return answer(request)
    if request.path.startswith(API):
        return JsonResponse({"detail": "the server failed on this request (a bug)"}, status=500)
    return defaults.server_error(request)


def _missing_table(exc: BaseException | None) -> bool:
    """SQLite's word for a table that is not there (an OperationalError, as a busy database's)."""
    return exc is not None and "no such table" in str(exc)


def api_handler(request: HttpRequest, exc: Exception | type[Exception]) -> HttpResponse:
    """The API's handler for DOWN (an endpoint's, or its authentication's, query): the 503,
    the error logged in a line with its first line of words."""
    if _missing_table(exc if isinstance(exc, BaseException) else None) and unmigrated():
        return not_migrated(request)
    said = first_line(exc)
    log.warning("%s %s: the database did not answer (%s)", request.method, request.path, said)
    return answer(request)
