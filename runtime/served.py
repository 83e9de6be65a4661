"""What a session serves from the record in place of the live thing, on resume and replay: a
tool's recorded outcome (its result, or its error raised again), a model's recorded failure
of a type nobody registered."""

from __future__ import annotations

from typing import Any

from runtime import errors
from runtime.events import ToolReturned
from runtime.model import ModelError
from runtime.tools import Tool


class ReplayedModelError(errors.ReplayedError, ModelError):
    """A recorded model failure of a type nobody registered: still a ModelError, so the
    harnesses that caught it live catch it on replay."""


def replayed_tool(tool: Tool, recorded: ToolReturned) -> Tool:
    """A stand-in for `tool` that returns the recorded result or raises the recorded error."""

    def recorded_call(**_: Any) -> Any:
        if recorded.error is not None:
            raise errors.rebuild(recorded.error)
        return recorded.result

    return Tool(tool.name, tool.description, tool.parameters, recorded_call, timeout=None)
