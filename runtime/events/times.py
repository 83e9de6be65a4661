"""The floats an event may carry, declared by what they are: a moment, a length of time, or a
figure. Each kind of float has the bounds no run's own value goes past.

    Instant   seconds since the epoch: a lease's expiry, when a stall began, the envelope's `t`;
              from 1970 to 3000-01-01 (0 is "not recorded": the reference runtime's lines)
    Seconds   a length of time: a delay, a deadline, what elapsed; within a thousand years of
              nothing either way (a negative one is two clocks that disagreed, not an attack)
    (other)   a figure (a rate, a ceiling's limit): any finite number

Every one of them must be finite: pydantic writes an infinite float as JSON null, which the
field then refuses, so one such value stored was an event nobody could read back.

Why declared on the model and not checked by name where it is read: a time too far for the
clock (a lease "expiring" at -1e18) went in through an import that bounded only `t`, and every
page that formats it (time.gmtime, datetime.fromtimestamp raise on it) stopped, for every run
in the store. Marked here, a new event's time field is bounded by writing its type; and
tests/runtime/test_event_times.py fails on a float field that is none of them, so a new one is
decided, not forgotten.

Only what writes checks (runtime.journal.check_batch on every append, the import's admission):
the models themselves take any float, so that an event stored before these bounds still reads,
and its readers tolerate it (runtime/instants.py).
"""

from __future__ import annotations

import functools
import math
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


INSTANT = _Marker("INSTANT")
SECONDS = _Marker("SECONDS")

Instant = Annotated[float, INSTANT]
Seconds = Annotated[float, SECONDS]

LATEST_T = 32503680000.0  # 3000-01-01: later timestamps are not from a run
LONGEST = LATEST_T  # about a thousand years: no length of time a run records is longer

Sort = Literal["instant", "seconds", "figure"]


def _marks(annotation: Any) -> set[object]:
    """The markers in an annotation, at any depth (`Instant | None`, `dict[str, Seconds]`)."""
    found: set[object] = set()
    if get_origin(annotation) is Annotated:
        found |= {m for m in annotation.__metadata__ if isinstance(m, _Marker)}
    for arg in get_args(annotation):
        found |= _marks(arg)
    return found


def _has_float(annotation: Any) -> bool:
    return annotation is float or any(_has_float(arg) for arg in get_args(annotation))


@functools.cache
def float_fields(cls: type[BaseModel]) -> tuple[tuple[str, Sort], ...]:
    """The model's fields that hold floats, each with its sort; worked out once per class."""
    fields: list[tuple[str, Sort]] = []
    for name, info in cls.model_fields.items():
        annotation = info.rebuild_annotation()
        marks = _marks(annotation)
        if INSTANT in marks:
            fields.append((name, "instant"))
        elif SECONDS in marks:
            fields.append((name, "seconds"))
        elif _has_float(annotation):
            fields.append((name, "figure"))
    return tuple(fields)


def _problem(name: str, value: float, sort: Sort) -> str | None:
    if not math.isfinite(value):
        return f"field {name!r}: {value!r} is not a number a run records"
    if sort == "instant" and not 0 <= value < LATEST_T:
        return f"field {name!r}: {value!r} is not a time of a run (from 1970 to 3000-01-01)"
    if sort == "seconds" and not -LONGEST < value < LONGEST:
        return f"field {name!r}: {value!r} seconds is longer than any run"
    return None


def float_problem(event: BaseModel) -> str | None:
    """The first float of the event out of its bounds (see above), named by its field; None
    when there is none. A field's floats in a list or a dict (a breaker's rates) are each
    checked; free-form values (a tool's result) are their readers' to check."""
    for name, sort in float_fields(type(event)):
        value = getattr(event, name)
        if isinstance(value, dict):
            values: Any = value.values()
        elif isinstance(value, (list, tuple)):
            values = value
        else:
            values = (value,)
        for item in values:
            if isinstance(item, float) and (problem := _problem(name, item, sort)):
                return problem
    return None
