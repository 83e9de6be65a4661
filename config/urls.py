from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, path


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for load balancers and compose: the process answers and the database does."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


urlpatterns: list[URLPattern | URLResolver] = [path("healthz", healthz, name="healthz")]
