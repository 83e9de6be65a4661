from __future__ import annotations

import functools

from django.contrib.auth import views as auth
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, include, path

from config.commandline import first_line
from dashboard.api import api


@functools.cache
def migrations() -> frozenset[tuple[str, str]]:
    """The newest migration of every app, as this code has them (read once a process)."""
    from django.db.migrations.loader import MigrationLoader

    return frozenset(MigrationLoader(None, ignore_no_migrations=True).graph.leaf_nodes())


def healthz(request: HttpRequest) -> HttpResponse:
    """Health for load balancers and compose: the process answers, the database does, and it
    holds this code's tables (a server started before `migrate` fails every page with a
    missing table: here it says so, once, with what to run)."""
    from django.db import DatabaseError, connection

    from dashboard.unavailable import DOWN

    try:
        connection.ensure_connection()
    except DOWN as exc:
        # Not "not migrated", which it said of a database it could not reach at all.
        return HttpResponse(
            f"the database does not answer: {first_line(exc)}",
            content_type="text/plain",
            status=503,
        )
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT app, name FROM django_migrations")
            applied = set(cursor.fetchall())
    except DatabaseError:
        applied = set()
    missing = sorted(f"{app}.{name}" for app, name in migrations() - applied)
    if missing:
        text = f"the database is not migrated ({', '.join(missing)}): run manage.py migrate"
        return HttpResponse(text, content_type="text/plain", status=503)
    return HttpResponse("ok", content_type="text/plain")


def no_icon(request: HttpRequest) -> HttpResponse:
    """No icon, as every page says (`data:,`). A browser still asks for /favicon.ico when it
    shows a document with no page around it (the API's JSON, an export), and a 404 there is
    an error in its console each time."""
    response = HttpResponse(status=204)
    response["Cache-Control"] = "public, max-age=86400"
    return response


# A 404 Django builds itself with DEBUG off is the same as dashboard.notfound's middleware gives.
handler404 = "dashboard.notfound.not_found"
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
