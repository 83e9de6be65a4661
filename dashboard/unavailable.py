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
from django.views import defaults

from config.commandline import first_line
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
    """503 with the sentence: the API's JSON under /api/, the sentence alone to htmx (swapped
    where the button was, as a refusal is), a page of its own otherwise. The page has no
    template logic: drawing the navigation would ask the database again."""
    if request.path.startswith(API):
        response: HttpResponse = JsonResponse({"detail": SENTENCE}, status=503)
    elif request.headers.get("HX-Request") == "true":
        context = {"message": SENTENCE[0].upper() + SENTENCE[1:] + ".", "level": "error"}
        response = render(request, "dashboard/_message.html", context, status=503)
    else:
        response = render(request, "503.html", status=503)
    response["Retry-After"] = RETRY_AFTER
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """config/urls.py's handler500. Django calls it while handling the exception (after
    logging it), so the exception is at hand: a database out of reach is the 503 above."""
    if isinstance(sys.exc_info()[1], DOWN):
        return answer(request)
    return defaults.server_error(request)


def api_handler(request: HttpRequest, exc: Exception | type[Exception]) -> HttpResponse:
    """The API's handler for DOWN (an endpoint's, or its authentication's, query): the 503,
    the error logged in a line with its first line of words."""
    said = first_line(exc)
    log.warning("%s %s: the database did not answer (%s)", request.method, request.path, said)
    return answer(request)
