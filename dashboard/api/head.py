"""HEAD on the API's addresses, answered as their GET is, without the body (RFC 9110: a server
answers HEAD wherever it answers GET). django-ninja routes each method to an operation and had
none for HEAD: a monitor's or a proxy's HEAD got a 405 "Method not allowed" from every read.

The request is handled as the GET it stands for (its authentication, its parameters and their
refusals alike) and the body is dropped; its Content-Length says what the GET would send. A
streamed answer (an export) is not read at all: its generator is never started. The pages'
HEAD (which they answer themselves) has its body dropped the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

API = "/api/"


class HeadAsGetMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method != "HEAD":
            return self.get_response(request)
        if request.path.startswith(API):
            request.method = "GET"
            try:
                response = self.get_response(request)
            finally:
                request.method = "HEAD"
        else:
            # The pages take HEAD themselves (require_safe); their bodies are dropped here
            # too, so that a HEAD of a run's export reads nothing of its journal.
            response = self.get_response(request)
        if isinstance(response, StreamingHttpResponse):
            response.streaming_content = iter(())
        else:
            length = len(response.content)
            response.content = b""
            response["Content-Length"] = str(length)
        return response
