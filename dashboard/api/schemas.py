"""What the API takes (`XIn`) and gives (`XOut`): every body typed, so the OpenAPI schema says
exactly which fields an answer holds. A run's minutes (bill, threads, audit...) are in
`minutes`.

Payloads agents wrote (a message's payload, a claim's value, a reviewer's evidence) are any
JSON value, and typed as such; everything Minutes itself builds has its fields named here.

The bodies of the runs' endpoints (a run, its events, a fork, tags) are in run_schemas.py;
the review queues' and the intents' (decisions, rulings, supersessions) in review_schemas.py.
What they share (`In`, the strict body; `Error`) and the journals' import are here.
"""

# No `from __future__ import annotations` here: django-ninja reads the annotations at runtime
# to build its models, and a Literal left as a string makes them unusable.

import re
from typing import Any, ClassVar

from ninja import Field, Schema
from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from runtime.flat import field_holding


class Error(Schema):
    detail: str


class In(BaseModel):
    """A request body: a JSON object holding only the fields named. An unknown field is a 422
    naming it, never dropped (a misspelt `team` must not start another team's run). A plain
    pydantic model, not ninja's Schema, whose reader takes any value (null, a list, a string)
    for an object with every field at its default.

    Strict, every field: a value of another JSON type is a 422 naming its field, never read
    as the type wanted (a string "10" as a number of seconds, "on", "yes" or 1 as true). A
    whole number still does for a float (JSON has one kind of number); an int Literal takes
    neither true nor 3.0, which strict Literals let through (`no_loose_choice`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # Fields a body's own checks judge whole, a NUL and half a pair among the rest, in their
    # words (RunIn's task and scenario, which NewRun judges): refused here, the field's other
    # faults were said only once the NUL was mended.
    judged_whole: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="before")
    @classmethod
    def no_nul(cls, value: Any, info: ValidationInfo) -> Any:
        """No NUL character in any string of a body, however deep: PostgreSQL's text has
        none, and a reason (a task, a message) holding one was journalled and then stopped
        every projector that read it. The pages' forms refuse it too (Django's CharField).
        Nor half a UTF-16 pair ("\\ud800" alone, which JSON's escapes can say): no event
        can hold it, and a fork's tool result holding one was a 500 at the append."""
        if info.field_name in cls.judged_whole:
            return value
        if field_holding({"": value}, NUL) is not None:
            raise ValueError("holds a NUL character (\\u0000), which no text here may hold")
        if field_holding({"": value}, HALF_PAIR) is not None:
            raise ValueError(
                "holds half a UTF-16 surrogate pair (such as \\ud800 alone), which is not text"
            )
        return value


NUL = re.compile("\x00")
HALF_PAIR = re.compile("[\ud800-\udfff]")


class Accepted(Schema):
    detail: str


# --- journals -----------------------------------------------------------------------------------


class LeftOutOut(Schema):
    stream: str
    lines: int
    said: str


class ImportOut(Schema):
    run_ids: list[str]
    events: int
    added: int
    torn: str | None
    left_out: list[LeftOutOut] = Field(
        default_factory=list,
        description="lines of the file not written, by stream: a run's pushes of its trace to "
        "the exporting store's collector, which exports before 2026-12-03 carried; not counted "
        "in `events`",
    )
    note: str | None = Field(
        default=None,
        description="set when the file was imported but the pages' read models could not be "
        "brought up to date after it: its runs may not be listed yet",
    )


class ImportRefusedOut(Schema):
    detail: str
    problems: list[str] = Field(description="the first problems, each naming its line")
    more: int = Field(description="how many more problems there were")
