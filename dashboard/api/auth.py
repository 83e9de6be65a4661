"""Who is asking: a script's bearer token, or the browser's session; and the docs' own guard.

Every endpoint needs one of the two (the session with CSRF on every unsafe method). The docs
page and the schema are for people signed in, the schema also for a token.
"""

# No `from __future__ import annotations`: django-ninja inspects these classes at runtime.

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from ninja.errors import HttpError
from ninja.security import HttpBearer, SessionAuth

from dashboard import signin
from dashboard.models import ApiToken

# What a read-only token may ask: the methods that change nothing.
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
REVOKED = "this token was revoked: its account's password was changed after it was made"
DEACTIVATED = "this token opens nothing: its account is deactivated"
AGAIN = "`manage.py api_token USER` makes another (--help for its expiry and --read-only)"
MAKE = "`manage.py api_token USER` makes one"


def why_unauthorized(request: HttpRequest) -> str:
    """The detail of a 401 for a request that opened nothing: what it sent wrong, where a bare
    "Unauthorized" told a script with no header, another scheme (`Token ...`) or a mistyped
    token the same nothing. The token itself is never said back."""
    sent = request.headers.get("Authorization", "").strip()
    if not sent:
        return f"no Authorization header: sign in, or send `Authorization: Bearer <token>`; {MAKE}"
    scheme, _, token = sent.partition(" ")
    if scheme.lower() != "bearer":
        return f"the Authorization header is not `Bearer <token>`; {MAKE}"
    if not token.strip():
        return f"the Authorization header holds no token after Bearer; {MAKE}"
    return f"no token here is the one sent (mistyped, or made for another store?); {AGAIN}"


class TokenAuth(HttpBearer):
    """`Authorization: Bearer mt_…`: a script's token (stored hashed).

    A wrong token counts as a failed sign-in from its address, and an address locked out for
    too many failures (passwords or tokens) is answered 429 before any token is looked at. A
    token whose person is deactivated (or deleted, and their tokens with them) opens nothing;
    one whose person's password changed after it was made, or past its expiry, is refused
    (401), and one made read-only is refused any method but a read (403), each saying so, from
    the moment it is so.
    """

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        if signin.token_locked_out(request):
            raise signin.LockedOut  # a 429 with Retry-After, as the sign-in form's (errors.py)
        found = ApiToken.objects.select_related("user").filter(digest=ApiToken.hash(token)).first()
        now = timezone.now()
        if found is None:
            signin.token_refused(request)
            return None
        if not found.user.is_active:
            # Said to its holder alone, as a revocation is: a script whose person was
            # deactivated learns why it stopped, where a bare 401 read as a mistyped token.
            signin.token_refused(request)
            raise HttpError(401, f"{DEACTIVATED}; {AGAIN}")
        if found.password_mark != ApiToken.mark(found.user.password):
            # Revoked by a change of its person's password since it was made, however the
            # password was changed (dashboard/passwords.py). Said, as an expiry is, to its
            # holder alone; it names no account. Counted as a token that opens nothing.
            signin.token_refused(request)
            raise HttpError(401, f"{REVOKED}; {AGAIN}")
        if found.expires_at is not None and found.expires_at <= now:
            # Said, since only its holder has it: a guess cannot land on a token, expired or
            # not. Counted all the same, as a token that opens nothing.
            signin.token_refused(request)
            raise HttpError(
                401, f"this token expired at {found.expires_at:%Y-%m-%d %H:%M} UTC; {AGAIN}"
            )
        if found.read_only and request.method not in SAFE_METHODS:
            # The method is not said back: it is the client's to write, whatever it holds.
            raise HttpError(403, f"this token is read-only: it may read, not change; {AGAIN}")
        ApiToken.objects.filter(pk=found.pk).update(last_used_at=now)
        request.user = found.user
        return found.user


class Session(SessionAuth):
    """The browser's session, with Django's CSRF check on every unsafe method. With nobody
    signed in there is no session to protect: the answer is 401, as for a GET, not the CSRF
    check's 403 (which told a script with a wrong token to look at cookies)."""

    def _get_key(self, request: HttpRequest) -> Any:
        if not request.user.is_authenticated:
            return None
        return super()._get_key(request)


# A bearer token first: a script sends no cookie, and the session check would refuse it for
# want of a CSRF token before the token was looked at.
AUTH = [TokenAuth(), Session(csrf=True)]


def signed_in_docs(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The docs page and the schema are for people signed in (the schema also for a token).

    Signed out, the page sends the browser to the login page; the schema answers 401 as the
    rest of the API does, and 429 to an address locked out for too many failures.
    """

    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        if not request.path.endswith(".json"):
            return redirect_to_login(request.get_full_path())
        try:
            user = TokenAuth()(request)
        except HttpError as exc:
            return JsonResponse({"detail": exc.message}, status=exc.status_code)
        except signin.LockedOut:
            # Outside the API's own handlers (errors.py): the schema's answer to an address
            # locked out is theirs, a 429 with Retry-After, where it was a server error.
            return signin.lockout_response(request, None)
        if user is None:
            return JsonResponse({"detail": why_unauthorized(request)}, status=401)
        return view(request, *args, **kwargs)

    return guarded


def user_name(request: HttpRequest) -> str:
    """Who is asking, as the journal records people."""
    return request.user.get_username()
