"""MinutesAPI: django-ninja's API, with the schema saying what django-ninja does unasked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ninja import NinjaAPI

if TYPE_CHECKING:
    from ninja.operation import Operation


UNVALIDATED = {
    "description": "the parameters or the body did not validate",
    "content": {"application/json": {"schema": {"type": "object"}}},
}
REFUSED_ADDRESS = {
    "description": "the address holds a NUL character, or the request too many parameters",
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


class MinutesAPI(NinjaAPI):
    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        """The schema, with what is answered to any operation that takes input written down
        for each: the 422 django-ninja gives a request whose parameters or body fail
        validation, and the 400 given before any view to an address holding a NUL character
        (dashboard/security.py), or to a request with too many parameters (api/errors.py)."""
        schema = super().get_openapi_schema(*args, **kwargs)
        for methods in schema["paths"].values():
            for operation in methods.values():
                if operation.get("parameters") or operation.get("requestBody"):
                    responses = operation["responses"]
                    # django-ninja keys the responses an operation declares by int.
                    for status, response in ((422, UNVALIDATED), (400, REFUSED_ADDRESS)):
                        if status not in responses and str(status) not in responses:
                            responses[str(status)] = response
        return schema

    def get_openapi_operation_id(self, operation: Operation) -> str:
        """`dashboard_api_<view>`, whichever module of the package holds the view: the ids
        clients generated from the schema (and the docs' anchors) stay what they were."""
        return f"dashboard_api_{operation.view_func.__name__}"
