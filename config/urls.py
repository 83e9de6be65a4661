from __future__ import annotations

from django.contrib.auth import views as auth
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, include, path

from dashboard.api import api


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for load balancers and compose: the process answers and the database does."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


urlpatterns: list[URLPattern | URLResolver] = [
    path("healthz", healthz, name="healthz"),
    path("login", auth.LoginView.as_view(), name="login"),
    path("logout", auth.LogoutView.as_view(), name="logout"),
    path("api/", api.urls),
    path("", include("dashboard.urls")),
]
