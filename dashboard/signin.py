"""Sign-in limits: wrong passwords and wrong API tokens count towards one lockout (django-axes).

A wrong password counts against the name it was tried for and against the address it came
from: ten in a row on one name (from anywhere) or from one address (on any names) and further
attempts are refused, right password or not, until a cool-off has passed since the last
failure. A wrong bearer token has no name: it counts against its address only, so a stranger
cannot lock every script out by sending bad tokens from elsewhere.
"""

from __future__ import annotations

import ipaddress
import math
from datetime import datetime
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone

LOCKED = "too many failed sign-ins from here; try again later"


def lockout_parameters(
    request_or_attempt: Any, credentials: dict[str, Any] | None = None
) -> list[str]:
    """What a failure is counted against: the name tried (when there is one) and the address.

    Axes asks with the credentials tried, or with a stored attempt; asked with neither (to
    write a log line) the address alone will do, rather than parse a request's body for a name.
    """
    if credentials is not None:
        username = credentials.get("username")
    else:
        username = getattr(request_or_attempt, "username", None)
    return ["username", "ip_address"] if username else ["ip_address"]


def client_ip(request: HttpRequest) -> str | None:
    """The address a request came from: behind our own proxy, the one it says it was sent by.

    Only the last X-Forwarded-For entry is the proxy's own word; the ones before it are
    whatever the client wrote.
    """
    remote: str | None = request.META.get("REMOTE_ADDR")
    if settings.BEHIND_PROXY:
        last = request.META.get("HTTP_X_FORWARDED_FOR", "").rsplit(",", 1)[-1].strip()
        try:
            return str(ipaddress.ip_address(last))
        except ValueError:
            return remote
    return remote


def cool_off_seconds() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def lifts_at(request: HttpRequest, credentials: Any = None) -> datetime:
    """When the lockout on this request lifts: a cool-off after the failure that still makes
    the limit, for each count that has reached it (the name's, the address's). Attempts
    during a lockout are not recorded, so the answer is fixed from the failure that caused
    it; a cool-off from now when the counts cannot be read (another axes handler)."""
    now = timezone.now()
    cool_off = settings.AXES_COOLOFF_TIME
    handler = AxesProxyHandler.get_implementation()
    if not isinstance(handler, AxesDatabaseHandler):
        return now + cool_off
    AxesProxyHandler.update_request(request)
    limit = settings.AXES_FAILURE_LIMIT
    lifts = None
    for attempts in handler.get_user_attempts(request, credentials or {"username": None}):
        counted = 0
        # Newest first: the count stays at the limit until the row that reaches it ages out.
        for failures, at in attempts.order_by("-attempt_time").values_list(
            "failures_since_start", "attempt_time"
        ):
            counted += failures
            if counted >= limit:
                lifts = at + cool_off if lifts is None else max(lifts, at + cool_off)
                break
    return lifts if lifts is not None and lifts > now else now + cool_off


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: Any = None
) -> HttpResponse:
    """429 with a Retry-After: the API's JSON error shape, or the login page's own message.
    Both say when the lockout lifts, counted from the failure that caused it, where they said
    a whole cool-off however much of it had passed."""
    response: HttpResponse
    lifts = lifts_at(request, credentials)
    seconds = max(1, math.ceil((lifts - timezone.now()).total_seconds()))
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": f"{LOCKED} ({lifted(lifts)})"}, status=429)
    else:
        said = {"minutes": math.ceil(seconds / 60), "lifts": lifted(lifts)}
        response = render(request, "registration/locked_out.html", said, status=429)
    response["Retry-After"] = str(seconds)
    return response


def lifted(at: datetime) -> str:
    return f"it lifts at {at:%H:%M:%S} UTC"


class LockedOut(Exception):
    """A request from an address locked out, refused before its token is looked at."""


def token_locked_out(request: HttpRequest) -> bool:
    """Whether the address this request came from is locked out (no name: a token has none)."""
    return not AxesProxyHandler.is_allowed(request, {"username": None})


def token_refused(request: HttpRequest) -> None:
    """Count a wrong bearer token as a failed sign-in from its address (the token is not kept)."""
    user_login_failed.send(sender=__name__, credentials={"username": None}, request=request)
