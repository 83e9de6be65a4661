"""How a session's step or run ends early: what an operator, a ceiling, a dead letter or the
end of the step's turns raise through the harness, and what a replay raises when the code and
the record part ways. Raised by `runtime/session.py`; caught by the hosts (the command line,
the workers) and the teams' harnesses."""

from __future__ import annotations

from dataclasses import dataclass

from runtime.events import CeilingReached, Event


@dataclass(frozen=True)
class StopRequest:
    by: str
    reason: str = ""


class ReplayDivergence(Exception):
    """The code emitted something other than what the journal recorded at that place."""

    def __init__(self, version: int, expected: Event | None, got: Event | str) -> None:
        want = "the end of the journal" if expected is None else describe(expected)
        made = got if isinstance(got, str) else describe(got)
        super().__init__(f"at version {version}: the journal has {want}, the run produced {made}")
        self.version = version
        self.expected = expected
        self.got = got


class StepComplete(Exception):
    """The session's live steps are used up: the next turn belongs to the next step."""


class Waiting(StepComplete):
    """The run waits on work elsewhere (a specialist on another worker): this step ends, and
    the next begins after `seconds`, replays to here and looks again."""

    def __init__(self, seconds: float, why: str) -> None:
        super().__init__(why)
        self.seconds = seconds
        self.why = why


class CeilingBreached(Exception):
    """A hard ceiling ended the run (CeilingReached is journalled)."""

    def __init__(self, event: CeilingReached) -> None:
        super().__init__(
            f"the run hit its {event.ceiling} ceiling ({event.value:g} of {event.limit:g})"
        )
        self.event = event


class Parked(Exception):
    """Work was dead-lettered and waits for a person to retry or discard it."""

    def __init__(self, letter_id: str, reason: str) -> None:
        super().__init__(f"dead-lettered ({letter_id}): {reason}")
        self.letter_id = letter_id
        self.reason = reason


@dataclass(frozen=True)
class Ceilings:
    """Hard limits checked at every turn boundary, outside the agents."""

    seconds: float | None = None  # wall clock since the run began
    turns: int | None = None  # model calls across the whole run


class ReplayEnded(Exception):
    """A replay reached the end of the journal while the run wanted to go on live."""


class Interrupted(Exception):
    """An operator's stop was honoured at a turn boundary (RunInterrupted is journalled)."""

    def __init__(self, request: StopRequest) -> None:
        super().__init__(
            f"interrupted by {request.by}" + (f": {request.reason}" if request.reason else "")
        )
        self.request = request


def describe(event: Event) -> str:
    fields = event.model_dump(mode="json", exclude={"id", "t", "run_id"}, exclude_none=True)
    return f"{event.kind} {fields}"
