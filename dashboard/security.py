"""The Content-Security-Policy header (Django 5.2 has none of its own), and addresses holding a
NUL character refused before any view reads them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from dashboard import query_string


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.policy = settings.CONTENT_SECURITY_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.policy)
        return response


class NulInAddressMiddleware:
    """A NUL character in the path or the query string is a 400 saying so. PostgreSQL's text
    has none, so a filter or an id holding one (`?q=%00`, `/runs/r-1%00/`) was a 500 there;
    on SQLite the query was cut short at it (`?q=%00` listed every run). No address of ours
    takes one, so none is read. (Bodies: the forms' fields and the API's refuse it, naming
    the field; so do the metrics' and the search's filters, which are left to say it: the
    search's `q` and `run` as a control character and as no run id.)"""

    NAMED_THERE = frozenset({"/metrics", "/api/metrics", "/search", "/api/search"})

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path or (
            ("%00" in query or "\x00" in query) and request.path not in self.NAMED_THERE
        ):
            text = "the address holds a NUL character (%00), which no page or API path takes"
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": text}, status=400)
            # The page every unreadable address gets, where this was bare text with no way
            # back; linking the path without its query where that holds no NUL.
            path = request.path if "\x00" not in request.path else ""
            return query_string.unreadable(request, [text], path)
        return self.get_response(request)
