"""HEAD on the API's addresses, answered as their GET is, without the body (RFC 9110: a server
answers HEAD wherever it answers GET). django-ninja routes each method to an operation and had
none for HEAD: a monitor's or a proxy's HEAD got a 405 "Method not allowed" from every read.

The request is handled as the GET it stands for (its authentication, its parameters and their
refusals alike) and the body is dropped; its Content-Length says what the GET would send. A
streamed answer (an export) is not read at all: its generator is never started.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

API = "/api/"


class HeadAsGetMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method != "HEAD" or not request.path.startswith(API):
            return self.get_response(request)
        request.method = "GET"
        try:
            response = self.get_response(request)
        finally:
            request.method = "HEAD"
        if isinstance(response, StreamingHttpResponse):
            response.streaming_content = iter(())
        else:
            length = len(response.content)
            response.content = b""
            response["Content-Length"] = str(length)
        return response
