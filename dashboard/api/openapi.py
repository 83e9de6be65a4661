"""MinutesAPI: django-ninja's API, with the schema saying what django-ninja does unasked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ninja import NinjaAPI

if TYPE_CHECKING:
    from ninja.operation import Operation


class MinutesAPI(NinjaAPI):
    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        """The schema, with the 422 django-ninja answers to any request whose parameters or
        body fail validation written down for every operation that takes input."""
        schema = super().get_openapi_schema(*args, **kwargs)
        for methods in schema["paths"].values():
            for operation in methods.values():
                if operation.get("parameters") or operation.get("requestBody"):
                    operation["responses"].setdefault(
                        "422",
                        {
                            "description": "the parameters or the body did not validate",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                    )
        return schema

    def get_openapi_operation_id(self, operation: Operation) -> str:
        """`dashboard_api_<view>`, whichever module of the package holds the view: the ids
        clients generated from the schema (and the docs' anchors) stay what they were."""
        return f"dashboard_api_{operation.view_func.__name__}"
