"""An address's query read as it was sent, or refused naming the parameter, before any view.

Django reads a query for every page and the API alike, and two things in it were read as
something nobody sent: a parameter given twice (`?after=1&after=2`) was its last value, the
other dropped unseen; and percent-escapes of bytes that are no UTF-8 (`?team=%FF`) became
U+FFFD, which a filter then looked for ("no run matches"). Both are refused here, naming each
parameter: the API answers 422 in its validation errors' shape (`loc: ["query", name]`), a
page 400 with the sentences and a link to the address without its query (templates/400.html),
htmx the sentences where its answer goes. An address that is no page is left to its 404.

Only the addresses whose filters take several values of one parameter take them: a run's
timeline its kinds, the comparison the runs ticked in the list.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve

from services.asked import shown

# By URL name: the parameters it reads as a list (request.GET.getlist).
MANY: dict[str, frozenset[str]] = {
    "run": frozenset({"kind"}),
    "run_tab": frozenset({"kind"}),
    "timeline_tail": frozenset({"kind"}),
    "compare": frozenset({"run"}),
}
SHOWN_VALUES = 3  # of a repeated parameter's values, in its refusal


def problems(query: bytes, many: frozenset[str] = frozenset()) -> dict[str, str]:
    """Why each parameter of the raw query string cannot be read as sent, by its name."""
    wrong: dict[str, str] = {}
    values: dict[str, list[str]] = {}
    for pair in query.split(b"&"):
        if not pair:
            continue
        raw_name, _, raw_value = pair.partition(b"=")
        name = decoded(raw_name)
        if name is None:
            wrong[as_sent(raw_name)] = "the parameter's name is not UTF-8 text"
            continue
        value = decoded(raw_value)
        if value is None:
            wrong[name] = (
                f"{shown(as_sent(raw_value))} is not UTF-8 text (its percent-escapes spell "
                "bytes that are no characters)"
            )
            continue
        values.setdefault(name, []).append(value)
    for name, found in values.items():
        if len(found) > 1 and name not in many and name not in wrong:
            said = ", ".join(shown(v) for v in found[:SHOWN_VALUES])
            more = ", …" if len(found) > SHOWN_VALUES else ""
            wrong[name] = f"given {len(found)} times ({said}{more}); this address takes one"
    return wrong


def decoded(raw: bytes) -> str | None:
    """A query's name or value as Django reads it ('+' a space), None when its bytes are not
    UTF-8 (Django read each such byte as U+FFFD)."""
    try:
        return unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return None


def as_sent(raw: bytes) -> str:
    """Bytes that are not text as the address held them: escapes as typed, a raw byte as \\xff."""
    return raw.decode("utf-8", errors="backslashreplace")


def query_bytes(request: HttpRequest) -> bytes:
    """The query string's bytes: WSGI gives them as latin-1 text (PEP 3333), ASGI as UTF-8."""
    query = str(request.META.get("QUERY_STRING", ""))
    try:
        return query.encode("iso-8859-1")
    except UnicodeEncodeError:
        return query.encode("utf-8")


class QueryStringMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = query_bytes(request)
        if not query:
            return self.get_response(request)
        try:
            match = resolve(request.path_info)
        except Resolver404:
            # No such address: its 404 says so, where its query was refused first, as if
            # mending the query would find the page.
            return self.get_response(request)
        wrong = problems(query, MANY.get(match.url_name or "", frozenset()))
        if not wrong:
            return self.get_response(request)
        if request.path.startswith("/api/"):
            detail = [
                {"type": "value_error", "loc": ["query", field], "msg": why}
                for field, why in wrong.items()
            ]
            return JsonResponse({"detail": detail}, status=422)
        said = [f"{field}: {why}" for field, why in wrong.items()]
        if request.headers.get("HX-Request") == "true":
            # Swapped where the request came from (a tab, a filter's rows), as a refusal is.
            context = {"message": "; ".join(said), "level": "error"}
            return render(request, "dashboard/_message.html", context, status=400)
        return unreadable(request, said, request.path)


def unreadable(request: HttpRequest, said: list[str], path: str) -> HttpResponse:
    """The page of an address that cannot be read (a 400): what is wrong with it, and a link
    to `path` (the address without its query; "" for none). A page of its own, where it was
    bare text with no way back. Drawn before the session is read, so it shows no navigation
    (400.html)."""
    path = path if not path.startswith("//") else "/"  # never off the site
    return render(request, "400.html", {"said": said, "path": path}, status=400)
