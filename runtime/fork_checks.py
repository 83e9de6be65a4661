"""What a person asks of a fork (Changes) and its checks: the changes themselves, whichever
door they came in by (the command line, the API's body, the fork page's form), and against the
run at the fork point (its agents, the event forked at). runtime/fork.py plans and writes the
fork; it names these as its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from runtime import flat, streams
from runtime.events import ToolReturned, shown
from runtime.events.base import VALUE_DEPTH
from runtime.journal import Recorded
from runtime.team import split_models
from runtime.written import unwritable

BACKENDS = ("scripted", "endpoint", "local", "zi", "rules")
MESSAGE_MAX = 8_000
RESULT_MAX = 200_000  # characters of a replacement tool result, as JSON
RESULT_DEPTH = VALUE_DEPTH  # levels of nesting in it: its line within what a line may be


class ForkRefused(ValueError):
    """The fork cannot be made as asked; the message says what and where.

    `field` names the change at fault (models, message, tool_result) when one is, and the
    message opens with it; `why` is the rest, for a form that shows it beside that change."""

    def __init__(self, why: str, field: str = "") -> None:
        super().__init__(f"{field}: {why}" if field else why)
        self.why, self.field = why, field


@dataclass(frozen=True)
class Changes:
    models: dict[str, str] = field(default_factory=dict)
    message: tuple[str, str] | None = None  # (agent, text)
    tool_result: Any = None
    replace_result: bool = False
    max_turns: int | None = None
    allowance: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.models:
            out["models"] = dict(self.models)
        if self.message is not None:
            out["message"] = {"agent": self.message[0], "text": self.message[1]}
        if self.replace_result:
            out["tool_result"] = self.tool_result
        if self.max_turns is not None:
            out["max_turns"] = self.max_turns
        if self.allowance is not None:
            out["allowance"] = self.allowance
        return out


def cited(at: Recorded, run_id: str) -> str:
    """The event as a refusal names it: by its position (what the API's `at` is) and, for the
    run's own journal, by its number there (what the run's pages show: "#29")."""
    if at.stream == streams.journal(run_id):
        return f"the event at position {at.position} (#{at.version})"
    return f"the event at position {at.position}"


def check(changes: Changes, at: Recorded, agents: set[str], run_id: str) -> None:
    """ForkRefused for the first of refusals(), naming its change; nothing when there are
    none."""
    for field_, said in refusals(changes, at, agents, run_id).items():
        raise ForkRefused(said[0], field_)


def refusals(
    changes: Changes, at: Recorded | None, agents: set[str], run_id: str
) -> dict[str, list[str]]:
    """Every refusal of the changes against the run (its `agents`; `at`, the event forked
    after, None when it is not known, and a replaced result is then not judged against it)
    and of the changes as given (asked()), by the change at fault (models, message,
    tool_result), in the order check() says the first: the API's 422 names them all at once,
    with the body's other faults."""
    found: dict[str, list[str]] = {}

    def refuse(why: str, change: str) -> None:
        found.setdefault(change, []).append(why)

    backends, names = split_models(changes.models)
    for agent, backend in backends.items():
        if agent not in agents:
            # Quoted short: the agent is whatever the body's key was (50,000 characters came
            # back whole).
            refuse(f"the run has no agent {shown(agent)} (it has {known(agents)})", "models")
        if backend not in BACKENDS:
            refuse(f"{shown(backend)} is not a backend ({', '.join(BACKENDS)})", "models")
        if agent in names and backend != "endpoint":
            refuse(f"{agent}: a model name is for the endpoint, not {backend}", "models")
    if changes.message is not None:
        agent = changes.message[0]
        if agent not in agents:
            refuse(f"the run has no agent {shown(agent)} (it has {known(agents)})", "message")
    if changes.replace_result and at is not None and not isinstance(at.event, ToolReturned):
        refuse(
            f"{cited(at, run_id)} is a {at.event.kind}; "
            "fork at a ToolReturned to replace its result",
            "tool_result",
        )
    for field_, why in given_refusals(changes):
        refuse(why, field_)
    return found


def asked(changes: Changes) -> None:
    """The changes as given, before any run is read: the message's text and the replacement
    tool result, ForkRefused naming the one at fault and what is wrong with it. The command
    line asks it as it reads its arguments; check() asks it of every fork planned."""
    for field_, why in given_refusals(changes):
        raise ForkRefused(why, field_)


def given_refusals(changes: Changes) -> list[tuple[str, str]]:
    """asked()'s refusals, each with the change it is of, in the order asked() says the
    first."""
    found = []
    if changes.message is not None and (why := message_refusal(changes.message[1])):
        found.append(("message", why))
    if changes.replace_result and (why := result_refusal(changes.tool_result)):
        found.append(("tool_result", why))
    return found


def message_refusal(text: str) -> str | None:
    """Why `text` cannot be a person's message to an agent; None when it can. The fork page's
    box and the API's `message.text` ask it too."""
    if not text.strip() or len(text) > MESSAGE_MAX:
        return f"say something, in at most {MESSAGE_MAX:,} characters"
    return unwritable(text)


def result_refusal(value: Any) -> str | None:
    """Why `value` (read from JSON) cannot replace a tool's result; None when it can."""
    if flat.deeper_than(value, RESULT_DEPTH):
        # Deeper, it could not be stored (the event's JSON stops at 200 levels: a 500), or
        # stored in a fork whose export no import takes (64 levels to a line).
        return f"nested deeper than {RESULT_DEPTH} levels of arrays and objects"
    try:
        size = len(json.dumps(value, default=str, allow_nan=False))
    except ValueError:
        # Python's JSON reads them; the journal would have stored null in their place.
        return "NaN and Infinity are not numbers JSON allows"
    if size > RESULT_MAX:
        return f"at most {RESULT_MAX:,} characters of JSON ({size:,})"
    return unwritable(value)


def known(agents: set[str]) -> str:
    return ", ".join(sorted(a for a in agents if a)) or "none"
