"""Refusals answered by type: a handler per refusal the services raise, with the status
dashboard/errors.py gives it (the pages use the same table), and the import's own answer.

An endpoint lets a refusal pass; its handler answers `{"detail": <the refusal's message>}`.
No handler looks at the message to choose a status.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, cast

import pydantic
from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from pydantic_core import PydanticCustomError

from dashboard import errors, signin, unavailable
from dashboard.api.auth import why_unauthorized
from dashboard.api.body import Unreadable
from journal_store.transfer import ImportRefused


def invalid(where: str, problems: Mapping[str, str | list[str]]) -> ValidationError:
    """A 422 in the shape of the API's own validation errors, one per refusal at [where, name]
    (where: "query", or "body" for a body's field, as api/openapi.py has them; a field refused
    for several reasons has one for each), so that a script reads one format: a value the
    schema let through but the service cannot take is answered as one the schema refused."""
    return ValidationError(
        [
            {"type": "value_error", "loc": [where, name], "msg": why}
            for name, said in problems.items()
            for why in ([said] if isinstance(said, str) else said)
        ]
    )


# What ValidationError.__reduce__ gives: from_exception_data, and what to call it with.
Reduced = tuple[object, tuple[str, list[Any], Literal["python", "json"], bool]]


def refused_also(
    schemas: pydantic.ValidationError, problems: Mapping[str, list[str]]
) -> pydantic.ValidationError:
    """The schema's refusal of a body with `problems` added, each an error at its field in
    invalid()'s format (a value_error, the refusal as its msg, no ctx): raised by the body's
    validator, django-ninja answers one 422 naming both, where the problems waited for the
    schema's faults to be mended. The schema's errors are kept as they were raised, in the
    form pydantic rebuilds a ValidationError from (its `__reduce__`, which pickling uses:
    `errors()` has lost the template of a custom error)."""
    _, (title, errors, input_type, hide_input) = cast(Reduced, schemas.__reduce__())
    return pydantic.ValidationError.from_exception_data(
        title, errors + entries(problems), input_type, hide_input
    )


def refused_as(title: str, problems: Mapping[str, list[str]]) -> pydantic.ValidationError:
    """A refusal of a body the schema let through, for `problems` alone, raised by its
    validator as refused_also's are: where the request is refused for something else in the
    same 422 (its Idempotency-Key header), so that it says every fault at once."""
    return pydantic.ValidationError.from_exception_data(title, entries(problems))


def entries(problems: Mapping[str, list[str]]) -> list[Any]:
    """`problems` as pydantic's errors in invalid()'s format, each at its field."""
    return [
        {"type": PydanticCustomError("value_error", why), "loc": (name,), "input": None}
        for name, said in problems.items()
        for why in said
    ]


def register(api: NinjaAPI) -> None:
    """Give `api` a handler for every refusal in dashboard/errors.py, and for ImportRefused."""
    for refusal, status in errors.REFUSALS.items():
        api.add_exception_handler(refusal, answer(api, status))
    for down in unavailable.DOWN:  # a 503 saying the database did not answer, not a bare 500
        api.add_exception_handler(down, unavailable.api_handler)

    @api.exception_handler(RequestDataTooBig)
    def too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        body = {"detail": f"the request body is more than {limit:,} bytes, the most one may be"}
        return api.create_response(request, body, status=413)

    @api.exception_handler(TooManyFieldsSent)
    def too_many(request: HttpRequest, exc: TooManyFieldsSent) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        body = {"detail": f"more than {limit:,} parameters, the most a request may have"}
        return api.create_response(request, body, status=400)

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        # django-ninja's answer to a body its parser refused names nothing: ours says why.
        said = str(exc.__cause__) if isinstance(exc.__cause__, Unreadable) else str(exc)
        return api.create_response(request, {"detail": said}, status=exc.status_code)

    @api.exception_handler(AuthenticationError)
    def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        # Neither a token nor a session opened the door: say which was missing or wrong.
        return api.create_response(request, {"detail": why_unauthorized(request)}, status=401)

    @api.exception_handler(signin.LockedOut)
    def locked_out(request: HttpRequest, exc: signin.LockedOut) -> HttpResponse:
        return signin.lockout_response(request, None)  # with Retry-After, which HttpError lacks

    @api.exception_handler(ImportRefused)
    def import_refused(request: HttpRequest, exc: ImportRefused) -> HttpResponse:
        body = {"detail": "nothing was imported", "problems": exc.problems, "more": exc.more}
        return api.create_response(request, body, status=400)


Handler = Callable[[HttpRequest, Exception | type[Exception]], HttpResponse]


def answer(api: NinjaAPI, status: int) -> Handler:
    """A handler answering `status` with the refusal's own message as the detail."""

    def handler(request: HttpRequest, exc: Exception | type[Exception]) -> HttpResponse:
        return api.create_response(request, {"detail": str(exc)}, status=status)

    return handler
