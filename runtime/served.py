"""What a session serves from the record in place of the live thing, on resume and replay: a
tool's recorded outcome (its result, or its error), a model's recorded failure
of a type nobody registered."""

from __future__ import annotations

from runtime import errors
from runtime.events import ToolReturned
from runtime.model import ModelError
from runtime.tools import Outcome


class ReplayedModelError(errors.ReplayedError, ModelError):
    """A recorded model failure of a type nobody registered: still a ModelError, so the
    harnesses that caught it live catch it on replay."""


def replayed_outcome(recorded: ToolReturned) -> Outcome:
    """A recorded call's outcome as it was journalled, result or error. Not through
    `tools.answered`: a record is served as it stands, whatever today's limits on what a new
    result may hold (a journal written before a limit replays as it was)."""
    return Outcome(recorded.tool, result=recorded.result, error=recorded.error)
