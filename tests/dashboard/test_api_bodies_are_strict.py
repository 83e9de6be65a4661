"""Every body the API takes reads a value only as the JSON type its field names: a string for a
number, a string or a number for a flag, true for a number is a 422 naming the field, and
nothing is recorded. `POST /api/runs` took `"max_seconds": "10"` (recorded 10.0), `"baseline":
"on"` (flew a baseline), `"reflect": "yes"` and `"reflect": 1` as true."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

import pytest
from django.test import Client
from pydantic import BaseModel, ValidationError

from dashboard.api import review_schemas, run_schemas, schemas
from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db

# What each JSON type must not be taken for.
LOOSE = {
    bool: ["on", "yes", "true", 1, 0],
    int: ["10", True, 10.5, 10.0],
    float: ["10", True],
    str: [5, True],
    Literal: ["3", True, 3.0],  # an int Literal
}


# Every module of bodies is imported, so that the walk finds their subclasses of `In`.
MODULES = (schemas, run_schemas, review_schemas)


def bodies() -> list[type[BaseModel]]:
    found, todo = [], [schemas.In]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("dashboard."):
                found.append(sub)
            todo.append(sub)
    return found


def named(body: str) -> type[BaseModel]:
    """The body of that name, in whichever module of the API's it is."""
    return next(b for b in bodies() if b.__name__ == body)


def kinds(annotation: Any) -> set[Any]:
    """The plain JSON types (and int Literals) an annotation takes, Optional and Annotated
    unwrapped."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return kinds(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return set().union(*(kinds(a) for a in typing.get_args(annotation)))
    if origin is Literal:
        values = typing.get_args(annotation)
        return {Literal} if all(isinstance(v, int) for v in values) else {str}
    if annotation in LOOSE:
        return {annotation}
    return set()


def cases() -> list[tuple[str, str, Any]]:
    found = []
    for body in bodies():
        for name, field in body.model_fields.items():
            for kind in kinds(field.annotation):
                found += [(body.__name__, name, value) for value in LOOSE[kind]]
    return found


def test_the_walk_finds_the_fields_the_reviewer_named():
    walked = {(body, name) for body, name, _ in cases()}
    assert {("RunIn", "max_seconds"), ("RunIn", "baseline"), ("RunIn", "reflect")} <= walked
    assert {("RunIn", "votes"), ("SupersedeIn", "version"), ("ForkIn", "at")} <= walked


@pytest.mark.parametrize(("body", "name", "value"), cases())
def test_a_value_of_another_type_is_refused_naming_its_field(body, name, value):
    with pytest.raises(ValidationError) as refused:
        named(body).model_validate({name: value})
    assert (name,) in [e["loc"][:1] for e in refused.value.errors()]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_seconds", "10"),
        ("baseline", "on"),
        ("reflect", "yes"),
        ("reflect", 1),
        ("votes", True),
        ("allowance", "5000"),
    ],
)
def test_post_runs_answers_422_and_records_nothing(token, field, value):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer = api.post("/api/runs", {"team": "repo-fix", field: value}, "application/json")
    assert answer.status_code == 422, answer.content
    assert [e["loc"] for e in answer.json()["detail"]] == [["body", field]]
    assert StoredEvent.objects.count() == 0


def test_the_json_types_still_do(token):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = {"team": "repo-fix", "scenario": "reflect", "max_seconds": 10, "reflect": True}
    answer = api.post("/api/runs", body, "application/json")
    assert answer.status_code == 201, answer.content
