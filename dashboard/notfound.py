"""The "not found" answer: Minutes' own page, in debug mode too.

With DEBUG on, Django answers a view's Http404 and an unmatched URL with its technical page
(every URL pattern listed) before any handler404 is asked (django.core.handlers.exception),
so `make run` would show it for a mistyped run id. This middleware answers first, the same
with DEBUG on or off: a page saying what was not found for a browser, the sentence alone for
an htmx request (htmx does not swap a 404; a page there would only be bytes), and the API's
own JSON for paths under /api/.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve

API = "/api/"


def what_was_missing(request: HttpRequest, exception: Exception | None) -> str:
    """The exception's own sentence ("no run r-x"), or, for an unmatched URL (whose
    Resolver404 carries the patterns tried, not a sentence), the path asked for."""
    if exception is not None and exception.args and isinstance(exception.args[0], str):
        return exception.args[0]
    return f"no page at {request.path}"


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """The 404 answer for `request`; also config/urls.py's handler404, so a 404 Django builds
    itself with DEBUG off (one raised outside the views) is this one too."""
    if request.path.startswith(API):
        # As django-ninja answers its own 404s.
        return JsonResponse({"detail": "Not Found"}, status=404)
    if (meant := slash_dropped(request)) is not None:
        return HttpResponseRedirect(meant)
    message = what_was_missing(request, exception)
    if request.headers.get("HX-Request") == "true":
        return HttpResponse(message, status=404, content_type="text/plain; charset=utf-8")
    return render(request, "404.html", {"message": message}, status=404)


def slash_dropped(request: HttpRequest) -> str | None:
    """The page a path with a trailing slash of too many meant (/metrics/ for /metrics,
    /runs/new/ for the form, /runs/ for the list), for a GET: people type them, and Django's
    APPEND_SLASH mends only the other way. None when it means nothing either."""
    path = request.path
    if request.method not in ("GET", "HEAD") or not path.endswith("/") or path == "/":
        return None
    meant = "/" if path == "/runs/" else path[:-1]
    try:
        resolve(meant)
    except Resolver404:
        return None
    query = request.META.get("QUERY_STRING", "")
    return f"{meant}?{query}" if query else meant


class NotFoundMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # A 404 with no resolver_match is Django's own answer to a URL no pattern matched
        # (resolving failed before any view ran); a view's 404 has its match set and is the
        # view's to word.
        if response.status_code == 404 and request.resolver_match is None:
            return not_found(request)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        # Under /api/ too: django-ninja answers the Http404s of its endpoints itself, so one
        # that reaches here is from a view of its own outside them (its root, /api/).
        if isinstance(exception, Http404):
            return not_found(request, exception)
        return None
