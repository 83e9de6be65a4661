"""The 405 answer: a sentence naming the method and what the address takes.

django-ninja answers a method a path does not take with a bare text body ("Method not
allowed"), where every other refusal of the API is `{"detail": ...}`: a script reading the
detail got a JSON error instead of the sentence. Django's `require_POST` answers a page's
with an empty body, which a browser shows as its own "this page isn't working": what a
newcomer met typing /logout, or opening a button's address (a retry, an interrupt) as a link.
A page's 405 is now Minutes' page saying what the address is for; an htmx request gets the
sentence alone, as its other refusals do.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.notfound import API


def allowed_of(response: HttpResponse) -> str:
    # Sorted: django-ninja lists them in no fixed order.
    return ", ".join(sorted(m.strip() for m in response.get("Allow", "").split(",") if m))


class MethodNotAllowedMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 405:
            return response
        allowed = allowed_of(response)
        if request.path.startswith(API):
            if response.get("Content-Type", "").startswith("application/json"):
                return response
            detail = f"{request.method} is not one of the methods {request.path} takes ({allowed})"
            answer: HttpResponse = JsonResponse({"detail": detail}, status=405)
        elif response.content:
            return response  # a view's own sentence
        else:
            # OPTIONS (a class-based view's) is not a way anyone reaches a page.
            takes = ", ".join(m for m in allowed.split(", ") if m != "OPTIONS")
            if request.headers.get("HX-Request") == "true":
                said = f"{request.method} is not one of the methods this address takes ({takes})"
                answer = HttpResponse(said, status=405, content_type="text/plain; charset=utf-8")
            else:
                context = {"method": request.method, "path": request.path, "allowed": takes}
                answer = render(request, "405.html", context, status=405)
        answer["Allow"] = allowed
        return answer
