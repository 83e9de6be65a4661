"""The base of every event: the envelope, payload pieces, and the flat JSON form's helpers."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections import deque
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from runtime.events.times import Instant


def new_id() -> str:
    return uuid.uuid4().hex


PLACEMENT_FIELDS = frozenset({"kind", "v", "stream", "version", "position"})


class Event(BaseModel):
    """One immutable fact in a run's minutes; subclasses name the kind and its payload."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ClassVar[str] = "Event"
    v: ClassVar[int] = 1

    id: str = Field(default_factory=new_id)
    t: Instant = Field(default_factory=time.time)
    run_id: str = ""
    agent: str | None = None
    turn: int | None = None
    task_id: str | None = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # The flat line puts the store's placement beside the payload: a payload field with
        # one of these names would be silently taken for it.
        clash = PLACEMENT_FIELDS & set(cls.model_fields)
        if clash:
            raise TypeError(f"{cls.__name__}: {sorted(clash)} are the journal's, not a payload's")

    def same_as(self, other: Event) -> bool:
        """True when both record the same fact: equal but for the id and the timestamp."""
        return type(self) is type(other) and _fact(self) == _fact(other)


def _fact(event: Event) -> dict[str, Any]:
    data = dict(event.__dict__)
    data.pop("id")
    data.pop("t")
    return data


# --- payload pieces -------------------------------------------------------------------------


# Why a call's usage is not the vendor's report as it stood (Usage.estimated): it reported
# none ("missing"), or a total no count of the call can be ("implausible"), and the figures are
# Minutes' estimate (about four characters a token); or it reported a figure past the most one
# call counts for, which is counted as that ("capped").
Estimated = Literal["missing", "implausible", "capped"]


class Usage(BaseModel):
    """Tokens one model call cost. `total` is what budgets debit; the split is known only
    when the vendor reports it, or is estimated.

    `estimated` (None: the vendor's figures) says when the figures are not the vendor's, and
    why (`Estimated`): the bill shows them as estimated and no price is put on them as fact.
    An estimate's total is its prompt and completion together; a report's is at least its
    parts (a vendor's total below them is raised to them: they are what it bills), and may be
    more (a vendor may count tokens its parts do not name), and then stands as reported.
    Usage recorded before its event's version that holds the mark (ModelResponded v3,
    ModelFailed v3) says nothing of it, and reads as reported."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Strict: a count is a whole number as JSON writes it; a file's "120" or true was read as
    # 120 tokens or 1 (every usage the runtime makes is of ints, and is stored as such).
    total: int = Field(ge=0, strict=True)
    prompt: int | None = Field(default=None, ge=0, strict=True)
    completion: int | None = Field(default=None, ge=0, strict=True)
    estimated: Estimated | None = None


class Served(BaseModel):
    """What the vendor said of who answered a model call: all optional, since a scripted model,
    a replayed journal, or a server that says nothing leaves them unknown. A trace reads them
    (`gen_ai.response.*`, `server.*`); nothing in the run depends on them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None  # the model the server says answered (may differ from the asked)
    asked: str | None = None  # the model name the request named (what a price table knows)
    response_id: str | None = None
    finish_reason: str | None = None  # as the vendor wrote it: stop, tool_calls, length, ...
    server_address: str | None = None  # the endpoint's host, never its path or credentials
    server_port: int | None = None


class CallData(BaseModel):
    """A tool call as the model asked for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ErrorInfo(BaseModel):
    """A failure as recorded: the exception's type name and its message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    message: str

    def __str__(self) -> str:
        # How every page, reason and outcome quotes a failure: "Type: message".
        return f"{self.type}: {self.message}"


class EventFormatError(ValueError):
    """A stored event that cannot be read; the message says what is wrong with it."""

    # The stored row, where a journal knows it (position, stream, version, kind): what a dead
    # letter names, so that a person finds the row to mend.
    row: tuple[int, str, int, str] | None = None


# The largest whole number an event may carry, at its top level or in a payload piece (usage,
# served): tokens, amounts, versions, positions, epochs. The read models copy them into 64-bit
# columns and add them up there; a million lines of at most this stay well inside, where one of
# 10**30 would stop every page that catches up with the journal. JSON readers that hold
# numbers as doubles (a browser) read it exactly too.
MAX_INT = 2**40
MAX_TURN = 2**31 - 1  # the envelope's turn is a 32-bit column


def shown(value: object, limit: int = 60) -> str:
    """A value as a message or the audit quotes it: repr'd (control characters escaped), and
    short. What it quotes is often a file's or an agent's, so never whole."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def integer_problem(event: BaseModel, where: str = "") -> str | None:
    """The first whole number in the event's fields (and its payload pieces', in lists too)
    beyond ±MAX_INT, named by its field; None when there is none. Free-form dicts (a tool's
    arguments, a run's settings) are their readers' to check."""
    for name, value in event.__dict__.items():
        if type(value) is int:
            limit = MAX_TURN if name == "turn" and not where else MAX_INT
            if not -limit <= value <= limit:
                return f"field {where + name!r}: {value} is more than a run can count"
        elif isinstance(value, BaseModel):
            if problem := integer_problem(value, f"{where}{name}."):
                return problem
        elif isinstance(value, (list, tuple)):
            # A list of plain numbers and strings is passed whole, its items' types gathered in
            # C: isinstance against BaseModel's metaclass on each item cost ten times encoding
            # a long list (bench/depth_walk.py, docs/benchmarks.md).
            if _LEAVES.issuperset(map(type, value)):
                continue
            for i, item in enumerate(value):
                if isinstance(item, BaseModel) and (
                    problem := integer_problem(item, f"{where}{name}.{i}.")
                ):
                    return problem
    return None


# Levels of arrays and objects a journal line may nest (an import takes no more: settings'
# IMPORT_MAX_DEPTH), and a free-form value someone gives (a tool's arguments or result, a
# fork's replacement result), which sits a few levels into its event's line. Past about 128,
# pydantic's JSON reader cannot read an event back: one stored event that deep stopped the
# projectors, and every page and list answered 500.
LINE_DEPTH = 64
VALUE_DEPTH = 60
# The longest journal line, in bytes, an import reads by default (settings'
# IMPORT_MAX_LINE_BYTES): what the runtime writes into one event must leave its line under it,
# or the run's own export would not import again.
LINE_BYTES = 1024 * 1024


def depth_problem(event: BaseModel) -> str | None:
    """The first field of the event whose value nests arrays and objects past a journal line's
    LINE_DEPTH (the line itself is one level), named; None when none does."""
    for name, value in event.__dict__.items():
        if type(value) in _LEAVES:
            continue  # most fields: a string, a number, None
        if nests_deeper_than(value, LINE_DEPTH - 1):
            return (
                f"field {name!r}: nested deeper than a journal line may be "
                f"({LINE_DEPTH} levels of arrays and objects)"
            )
    return None


def nests_deeper_than(value: Any, limit: int) -> bool:
    """Whether the value, as pydantic writes it in an event, nests arrays and objects more than
    `limit` levels (a list of numbers is one level). Counted without recursion, so no depth can
    raise out of here, a level at a time: one list per level, where a stack of (value, depth)
    pairs made a tuple for every container (check_batch walks every event appended, and a
    tool's result may hold thousands)."""
    if type(value) in _LEAVES or not (isinstance(value, _NESTS) or _dataclass(value)):
        return False
    level: list[Any] = [value]
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            kind = type(item)
            if kind is dict:
                children: Any = item.values()
            elif kind is list or kind is tuple:
                children = item
            elif isinstance(item, BaseModel):
                children = item.__dict__.values()
            elif isinstance(item, dict):
                children = item.values()
            elif _dataclass(item):
                children = [getattr(item, f.name) for f in dataclasses.fields(item)]
            else:
                children = item  # a list or tuple of a type of its own, a set, a deque
            below += [
                c
                for c in children
                if type(c) not in _LEAVES and (isinstance(c, _NESTS) or _dataclass(c))
            ]
        level = below
        depth += 1
    return False


# What pydantic writes as a JSON array or object, in a free-form field (a tool's result) too:
# a set is written as an array and a dataclass as an object, as deep as they nest. (A generator
# is written as an array as well, once: walking it here would empty it, and an event holding
# one loses its content at its first encoding anyway.)
_NESTS = (dict, list, tuple, set, frozenset, deque, BaseModel)


def _dataclass(value: Any) -> bool:
    """Whether the value is a dataclass's instance (not the class itself)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


# Exact types that hold nothing: a payload's values are mostly these, and one set lookup
# passes them, where isinstance(value, _NESTS) would end in BaseModel's metaclass's
# __instancecheck__ (an ABC's), the larger part of the walk's cost on a long list of numbers
# or strings (docs/benchmarks.md, "The depth check's share of an append"). A subclass of one
# of them (a str enum) is not in the set and takes the isinstance check as before.
_LEAVES = frozenset({str, int, float, bool, type(None)})


def describe_validation(exc: ValidationError) -> str:
    """One line per problem, naming the field: "field 'usage.total': Input should be ..."."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(event)"
        if err["type"] == "extra_forbidden":
            parts.append(f"unexpected field {where!r}")
        elif err["type"] == "missing":
            parts.append(f"missing field {where!r}")
        else:
            parts.append(f"field {where!r}: {err['msg']}")
    return "; ".join(parts)


ENVELOPE_FIELDS = frozenset({"id", "t", "run_id", "agent", "turn", "task_id"})


def payload_json(event: Event) -> str:
    """The event's own fields (not the envelope) as compact JSON text, in declaration order."""
    return event.model_dump_json(exclude=ENVELOPE_FIELDS)  # type: ignore[arg-type]


def event_fields(event: Event) -> dict[str, Any]:
    """The event's flat JSON form without envelope placement: kind, v, then its fields."""
    body = event.model_dump(mode="json", exclude_none=False)
    for key in ("agent", "turn", "task_id"):
        if body.get(key) is None:
            body.pop(key, None)
    return {"kind": event.kind, "v": event.v, **body}
