"""The answers to a request this person may not make, or no longer can: a sentence, never a
bare "403 Forbidden", and never a sign-in page swapped into a card.

htmx swaps a 403 in (templates/base.html), so a button pressed without the right (the reviewer
permission taken away while the queue was open, a run someone else started) says why where it
was pressed, where it did nothing. A page whose session has ended is sent to sign in as a
whole, and back to itself after: htmx followed the redirect, put the sign-in page inside the
card the button was in, and signing in there went on to the button's address as a GET (405).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render, resolve_url
from django_htmx.http import HttpResponseClientRedirect

from dashboard import uploads
from services.asked import shown

API = "/api/"
STALE = (
    "this page is out of date: the form's security token is missing or no longer valid (as "
    "after signing out, or signing in again in another tab); reload the page and try again"
)


def say(request: HttpRequest, message: str) -> HttpResponse:
    """403 with `message`: the sentence alone to htmx (swapped where the button was), the
    API's JSON under /api/, a page with the navigation to a plain form's post."""
    if request.path.startswith(API):
        return JsonResponse({"detail": message}, status=403)
    if request.headers.get("HX-Request") == "true":
        context = {"message": message, "level": "error"}
        return render(request, "dashboard/_message.html", context, status=403)
    return render(request, "403.html", {"message": message}, status=403)


def forbidden(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """config/urls.py's handler403: the refusal's own sentence ("deciding on review items
    needs the reviewer permission"), where Django's page said only "403 Forbidden"."""
    said = exception.args[0] if exception is not None and exception.args else None
    return say(request, said if isinstance(said, str) and said else "you may not do this")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """config/urls.py's handler400 (Django calls it with debug off). A Host header this server
    does not answer for says so, naming the setting, where templates/400.html spoke of an
    address to mend and listed nothing; the API answers JSON. A form too large to read says
    the limit (dashboard/uploads.py). Anything else Django refuses as unreadable is the 400
    page's general sentence. The Host is never asked for here: it is
    what was refused."""
    if isinstance(exception, DisallowedHost):
        host = str(request.META.get("HTTP_HOST") or request.META.get("SERVER_NAME") or "")
        message = (
            f"this server is not configured to answer for the host name {shown(host)}; its "
            "operator lists the names it answers for in MINUTES_ALLOWED_HOSTS"
        )
        if request.path.startswith(API):
            return JsonResponse({"detail": message}, status=400)
        return render(request, "400.html", {"host_refused": message}, status=400)
    if isinstance(exception, RequestDataTooBig | TooManyFieldsSent):
        return uploads.form_too_large(request, exception)
    if request.path.startswith(API):
        return JsonResponse({"detail": "the request cannot be read as it was sent"}, status=400)
    return render(request, "400.html", status=400)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """settings.CSRF_FAILURE_VIEW: what to do about it, not Django's reason for developers."""
    return say(request, STALE)


class SignedOutMiddleware:
    """An htmx request from a page whose session has ended: the whole page to the sign-in
    form, which comes back to that page, not to the button's address."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.headers.get("HX-Request") != "true" or response.status_code != 302:
            return response
        login = resolve_url(settings.LOGIN_URL)
        if urlsplit(response["Location"]).path != login:
            return response
        page = urlsplit(request.headers.get("HX-Current-URL", ""))
        # The page's path only, on this host: the address bar's, not a header to be trusted.
        back = page.path + (f"?{page.query}" if page.query else "") if page.path else "/"
        return HttpResponseClientRedirect(f"{login}?{urlencode({'next': back})}")
