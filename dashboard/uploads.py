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
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

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
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": text}, status=413)
            # A page, with the way back and how to import a larger journal, where it was a
            # bare line of text. Sessions are not read yet: the page shows the signed-out
            # navigation, and says nothing of anyone's.
            return render(request, "413.html", {"message": text}, status=413)
        return self.get_response(request)
