from __future__ import annotations

from django.contrib.auth import views as auth
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, include, path

from config.health import healthz
from dashboard.api import api


def no_icon(request: HttpRequest) -> HttpResponse:
    """No icon, as every page says (`data:,`). A browser still asks for /favicon.ico when it
    shows a document with no page around it (the API's JSON, an export), and a 404 there is
    an error in its console each time."""
    response = HttpResponse(status=204)
    response["Cache-Control"] = "public, max-age=86400"
    return response


# A 404 Django builds itself with DEBUG off is the same as dashboard.notfound's middleware gives.
handler404 = "dashboard.notfound.not_found"
# A host name this server does not answer for says so, naming MINUTES_ALLOWED_HOSTS (JSON under
# /api/); Django's other refusals of an unreadable request, a general sentence.
handler400 = "dashboard.refused.bad_request"
# A refusal's own sentence ("... needs the reviewer permission"), where Django's said none.
handler403 = "dashboard.refused.forbidden"
# A database out of reach is a 503 saying so (dashboard/unavailable.py); anything else, the 500.
handler500 = "dashboard.unavailable.server_error"

urlpatterns: list[URLPattern | URLResolver] = [
    path("healthz", healthz, name="healthz"),
    path("favicon.ico", no_icon),
    path("login", auth.LoginView.as_view(), name="login"),
    path("logout", auth.LogoutView.as_view(), name="logout"),
    path("api/", api.urls),
    path("", include("dashboard.urls")),
]
