"""What people say of a run beside its minutes: where it came from (a fork of another run, and
what a person changed there), and the tags they put on it."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from runtime.events.base import Event

Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class ModelSettings(BaseModel):
    """Which model each agent asked, as TeamStarted's settings say it (`model`, `models`,
    `model_name`, `model_names`): a fork's parent's, kept at the fork point because the fork's
    copied TeamStarted carries the fork's own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: Name = "scripted"
    models: dict[Name, Name] = Field(default_factory=dict, max_length=64)
    model_name: Name | None = None
    model_names: dict[Name, Name] = Field(default_factory=dict, max_length=64)


class RunForked(Event):
    """This run began as a copy of `parent` up to the event at position `at` (the parent's
    `number`-th), then went its own way with `changes`. Recorded in the fork's journal right
    after the copied prefix: no code emits it (a session takes it as it passes), and a reply's
    deadline does not count the time between the parent's event and the fork.

    `parent_models` are the models the parent's agents asked, which the copied prefix's calls
    were made on: the bill prices those calls at them (None in forks from before it was kept:
    their prefix is priced at the fork's models)."""

    kind: ClassVar[str] = "RunForked"
    parent: str
    at: int  # the parent's event's position in the journal
    number: int
    by: str
    changes: dict[str, Any] = Field(default_factory=dict)
    parent_models: ModelSettings | None = None


class MessageInjected(Event):
    """A person's message for an agent (`agent`), put into the run where it was forked. The
    agent reads it as new mail at its next turn."""

    kind: ClassVar[str] = "MessageInjected"
    by: str
    text: str = Field(max_length=8_000)


class RunTagged(Event):
    """A person put tags on the run (`added`) or took them off (`removed`). Recorded in the
    run's control stream: tags are people's notes about a run, not part of its minutes."""

    kind: ClassVar[str] = "RunTagged"
    by: str
    added: list[str] = Field(default_factory=list, max_length=20)
    removed: list[str] = Field(default_factory=list, max_length=20)
