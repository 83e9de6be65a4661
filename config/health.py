"""/healthz: whether this server can serve, answered whatever the request's Host header says.

A container's probe or a load balancer asks the app by its address (http://127.0.0.1:8000),
not by the host name MINUTES_ALLOWED_HOSTS lists: Django refused that Host (400) before the
view was reached, so a stack whose operator set their real host name never became healthy.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from config.commandline import first_line

log = logging.getLogger(__name__)

PATH = "/healthz"
DOWN_SAID = "the database does not answer (what its driver said is in the server's log)"


@functools.cache
def migrations() -> frozenset[tuple[str, str]]:
    """The newest migration of every app, as this code has them (read once a process)."""
    from django.db.migrations.loader import MigrationLoader

    return frozenset(MigrationLoader(None, ignore_no_migrations=True).graph.leaf_nodes())


def unmigrated() -> list[str]:
    """The migrations of this code the database has not applied (app.name), or all of them
    when it has no record of any; [] when it is up to date. Also what a page or the API
    answers after a failure on a missing table (dashboard/unavailable.py)."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT app, name FROM django_migrations")
            applied = set(cursor.fetchall())
    except DatabaseError:
        applied = set()
    return sorted(f"{app}.{name}" for app, name in migrations() - applied)


def healthz(request: HttpRequest) -> HttpResponse:
    """Health for load balancers and compose: the process answers, the database does, and it
    holds this code's tables (a server started before `migrate` fails every page with a
    missing table: here it says so, once, with what to run)."""
    from django.db import connection

    from dashboard.unavailable import DOWN

    try:
        connection.ensure_connection()
    except DOWN as exc:
        # Not "not migrated", which it said of a database it could not reach at all. The
        # driver's words go to the log: they name the database's host and port, and anyone
        # may ask /healthz (dashboard/unavailable.py keeps them off the pages alike).
        log.warning("/healthz: the database does not answer (%s)", first_line(exc))
        return HttpResponse(DOWN_SAID, content_type="text/plain", status=503)
    missing = unmigrated()
    if missing:
        text = f"the database is not migrated ({', '.join(missing)}): run manage.py migrate"
        return HttpResponse(text, content_type="text/plain", status=503)
    return HttpResponse("ok", content_type="text/plain")


class HealthzMiddleware:
    """Answers GET and HEAD /healthz itself, before anything reads the Host header (Django's
    CommonMiddleware, CSRF, the views): the answer names no host and links nowhere, so it is
    safe to give whichever Host was asked. Placed after SecurityMiddleware, which leaves this
    path alone (SECURE_REDIRECT_EXEMPT: a probe cannot follow a redirect to https) and reads no
    Host for it, so the answer carries the same headers as every page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info == PATH and request.method in ("GET", "HEAD"):
            return healthz(request)
        return self.get_response(request)
