"""MinutesAPI: django-ninja's API, with the schema saying what django-ninja does unasked, and
a body's validation errors pointing at the body's field."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import ValidationError

from dashboard.query_string import decoded, query_bytes

if TYPE_CHECKING:
    from ninja.errors import ValidationErrorContext
    from ninja.operation import Operation


UNVALIDATED = {
    "description": "the parameters or the body did not validate",
    "content": {"application/json": {"schema": {"type": "object"}}},
}


def detail(description: str) -> dict[str, Any]:
    """A response whose body is `{"detail": "..."}`, as every refusal here is."""
    return {
        "description": description,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {"detail": {"type": "string"}},
                    "required": ["detail"],
                }
            }
        },
    }


REFUSED_ADDRESS = detail("the address holds a NUL character, or the request too many parameters")
REFUSED_BODY = detail(
    "the address holds a NUL character, the request too many parameters, or the body is not "
    "JSON (the detail says what is wrong and where)"
)
# What any operation may answer before its view runs (api/auth.py, dashboard/signin.py,
# dashboard/unavailable.py, api/errors.py): written down for each, where the schema named none.
EVERY = (
    (401, detail("no valid bearer token (or one past its expiry) and no session")),
    (429, detail("too many failed sign-ins from this address; Retry-After says when to retry")),
    (
        503,
        detail("the database did not answer, or is not migrated; Retry-After says when to retry"),
    ),
)
WITH_BODY = ((413, detail("the request body is larger than the most one may be")),)
# And to any operation that changes something, from a token made read-only (api/auth.py).
CHANGING = ((403, detail("a read-only token, which may only read")),)


class MinutesAPI(NinjaAPI):
    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        """The schema, with what is answered to any operation that takes input written down
        for each: the 422 django-ninja gives a request whose parameters or body fail
        validation, and the 400 given before any view to an address holding a NUL character
        (dashboard/security.py), or to a request with too many parameters (api/errors.py);
        and to every operation what it may answer before its view runs (EVERY, WITH_BODY,
        CHANGING)."""
        schema = super().get_openapi_schema(*args, **kwargs)
        for methods in schema["paths"].values():
            for method, operation in methods.items():
                answers: list[tuple[int, dict[str, Any]]] = list(EVERY)
                if method not in ("get", "head", "options"):
                    answers += CHANGING
                if "application/json" in operation.get("requestBody", {}).get("content", {}):
                    answers += [(422, UNVALIDATED), (400, REFUSED_BODY)]
                elif operation.get("parameters") or operation.get("requestBody"):
                    answers += [(422, UNVALIDATED), (400, REFUSED_ADDRESS)]
                if operation.get("requestBody"):
                    answers += WITH_BODY
                responses = operation["responses"]
                # django-ninja keys the responses an operation declares by int.
                for status, response in answers:
                    if status not in responses and str(status) not in responses:
                        responses[str(status)] = response
        return schema

    def create_temporal_response(self, request: HttpRequest) -> HttpResponse:
        """django-ninja asks for this after the operation's authentication and before it reads
        the parameters: where a parameter the operation does not take is refused (a 422 in
        its validation errors' shape), so that nobody signed out learns what it takes."""
        match = request.resolver_match
        if match is not None and request.method:
            query = query_bytes(request)
            if query and (wrong := unknown_parameters(query, match.route, request.method)):
                raise ValidationError(
                    [
                        {"type": "value_error", "loc": ("query", name), "msg": why}
                        for name, why in wrong.items()
                    ]
                )
        return super().create_temporal_response(request)

    def get_openapi_operation_id(self, operation: Operation) -> str:
        """`dashboard_api_<view>`, whichever module of the package holds the view: the ids
        clients generated from the schema (and the docs' anchors) stay what they were."""
        return f"dashboard_api_{operation.view_func.__name__}"

    def validation_error_from_error_contexts(
        self, error_contexts: list[ValidationErrorContext[Any]]
    ) -> ValidationError:
        """The 422's errors, a JSON body's at `["body", <field>]` as a query's are at
        `["query", <field>]`: django-ninja reads a body that is one schema parameter as an
        object holding it under the parameter's name, and its errors pointed at
        `["body", "body", <field>]`. What a client sends is read as before."""
        errors: list[dict[str, Any]] = []
        for context in error_contexts:
            found = super().validation_error_from_error_contexts([context]).errors
            held_as = getattr(context.model, "__read_from_single_attr__", None)
            for error in found:
                loc = tuple(error["loc"])
                if held_as and loc[:2] == ("body", held_as):
                    error["loc"] = ("body", *loc[2:])
                if error.get("type") == "model_type":
                    # A body (or a field) that is no JSON object: said so, where pydantic
                    # named our class ("a valid dictionary or instance of RunIn").
                    error["msg"] = "Input should be a JSON object"
                    error.pop("ctx", None)
                errors.append(error)
        return ValidationError(errors)


# --- parameters no operation takes ---------------------------------------------------------------


def unknown_parameters(query: bytes, route: str, method: str) -> dict[str, str]:
    """The query's parameters that the API's operation at `route` (Django's pattern, as the
    address resolved) for `method` does not take, each with why: a 422 naming it (after the
    operation's authentication: MinutesAPI.create_temporal_response), where it was ignored
    unseen (`?agent=` on events gave every agent's; `?stauts=` every run). What the
    operation takes is what its schema lists, so the two cannot disagree. An address with no
    operation in the schema (the docs page, the schema itself) is left alone."""
    # HEAD arrives here as the GET it stands for (api/head.py).
    taken = _query_names().get((_shape(route), method.lower()))
    if taken is None:
        return {}
    pairs = query.split(b"&")
    if len(pairs) > settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:
        return {}  # too many to read at all: Django's refusal says so (api/errors.py)
    wrong: dict[str, str] = {}
    for pair in pairs:
        name = decoded(pair.partition(b"=")[0]) if pair else None
        if name is not None and name not in taken and name not in wrong:
            takes = f"it takes {', '.join(sorted(taken))}" if taken else "it takes none"
            wrong[name] = f"no such parameter for {method} here ({takes})"
    return wrong


@functools.cache
def _query_names() -> dict[tuple[str, str], frozenset[str]]:
    from dashboard.api import api  # the package that imports this module

    names: dict[tuple[str, str], frozenset[str]] = {}
    for path, methods in api.get_openapi_schema(path_prefix="/api/")["paths"].items():
        for method, operation in methods.items():
            params = operation.get("parameters") or []
            taken = frozenset(p["name"] for p in params if p.get("in") == "query")
            names[(_shape(path), method)] = taken
    return names


def _shape(route: str) -> str:
    """A route with its parameters as {}: Django's `<run_id>` and OpenAPI's `{run_id}` alike."""
    return _PARAM.sub("{}", route.strip("/"))


_PARAM = re.compile(r"<[^>]*>|\{[^}]*\}")
