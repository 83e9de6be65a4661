"""The API's 405 in its own JSON.

django-ninja answers a method a path does not take with a bare text body ("Method not
allowed"), where every other refusal of the API is `{"detail": ...}`: a script reading the
detail got a JSON error instead of the sentence. The pages' 405s are left as Django makes them.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from dashboard.notfound import API


class MethodNotAllowedMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 405 or not request.path.startswith(API):
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        # Sorted: django-ninja lists them in no fixed order.
        allowed = ", ".join(sorted(m.strip() for m in response.get("Allow", "").split(",") if m))
        detail = f"{request.method} is not one of the methods {request.path} takes ({allowed})"
        answer = JsonResponse({"detail": detail}, status=405)
        answer["Allow"] = allowed
        return answer
