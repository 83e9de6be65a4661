"""Request bodies larger than a journal import may be are refused before they are read.

Django holds forms and JSON in memory only up to DATA_UPLOAD_MAX_MEMORY_SIZE, but it streams an
uploaded file to a temporary file whatever its size, and CSRF checking parses a form's body
before any view runs. So the one check that comes before reading has to be here, first in the
middleware, on the declared Content-Length (Django never reads past it). The import itself
checks the file's exact size again.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from journal_store.transfer import ImportRefused

# What a multipart body adds to its file: boundaries, part headers, the other fields.
OVERHEAD = 64 * 1024


def body_limit() -> int:
    return int(settings.IMPORT_MAX_BYTES) + OVERHEAD


def declared_length(request: HttpRequest) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0  # as Django reads it: an unreadable length is an empty body


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = declared_length(request)
        if length > body_limit():
            text = (
                f"the request is {length:,} bytes; a journal import may be at most "
                f"{settings.IMPORT_MAX_BYTES:,} bytes, and nothing else takes more"
            )
            # Sessions are not read yet: a page shows the signed-out navigation, and says
            # nothing of anyone's.
            return too_large(request, text, journal=True)
        return self.get_response(request)


def too_large(
    request: HttpRequest, text: str, journal: bool = False, status: int = 413
) -> HttpResponse:
    """A body refused for its size (or its number of fields: `status` 400), saying `text`:
    the API's JSON under /api/; to htmx the sentence alone, swapped in where the form's
    answer goes (a whole page was put inside the card); otherwise a page with the way back
    and, for a journal (`journal`), how to import a larger one."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": text}, status=status)
    if request.headers.get("HX-Request") == "true":
        said = {"message": text[0].upper() + text[1:] + ".", "level": "error"}
        return render(request, "dashboard/_message.html", said, status=status)
    return render(request, "413.html", {"message": text, "journal": journal}, status=status)


def form_too_large(
    request: HttpRequest, exc: RequestDataTooBig | TooManyFieldsSent
) -> HttpResponse:
    """What a page answers a form whose fields Django would not read (dashboard/refused.py
    bad_request): 413 naming the limit for a body past DATA_UPLOAD_MAX_MEMORY_SIZE, 400 for
    more fields than DATA_UPLOAD_MAX_NUMBER_FIELDS, where both were the 400 page's "a
    header, the address or the body is malformed", and the API said why."""
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        text = (
            f"the request holds more than {limit:,} fields or parameters, the most a page "
            "reads, so nothing was read or changed"
        )
        return too_large(request, text, status=400)
    text = (
        f"the form sent more than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes of fields, the "
        "most a page reads (a file uploaded to the import page aside), so nothing was read or "
        "changed"
    )
    return too_large(request, text)


def one_journal(request: HttpRequest) -> None:
    """Refuse a request that sends more than one file as the journal: the import read only the
    last one (Django's choice among a field's values) and said nothing of the others."""
    sent = request.FILES.getlist("journal")
    if len(sent) > 1:
        raise ImportRefused(
            [f"{len(sent)} files were sent as the journal: an import takes one file a request"]
        )
