"""Tools: a name, a JSON schema and a callable, dispatched so that failures become observations.

Registration is an explicit list handed to an agent. Arguments are validated against the schema
before anything runs. Whatever goes wrong — a tool the agent may not use, bad arguments, an
exception, a timeout, a non-zero exit — comes back as `{"tool": ..., "error": {...}}`: to an
agent a stack trace is data about the world, and whether to retry is the loop's policy.
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from runtime import errors, flat
from runtime.events import LINE_BYTES, VALUE_DEPTH, ErrorInfo, nests_deeper_than
from runtime.model import UNREADABLE_ARGS, ToolCall, ToolSpec
from runtime.schemas import Unusable, relevant_error, validator_for

DEFAULT_TIMEOUT = 60.0


@errors.replayable
class ToolFailure(Exception):
    """Raised by a tool to fail with a clear message (the type name is the observation's)."""


@errors.replayable
class ToolExit(ToolFailure):
    """A subprocess the tool ran exited non-zero."""

    def __init__(self, command: str, code: int, output: str = "") -> None:
        tail = output[-2000:]
        super().__init__(f"{command} exited {code}" + (f": {tail}" if tail else ""))
        self.code = code


@errors.replayable
class ToolTimeout(ToolFailure):
    pass


@errors.replayable
class NotAllowed(ToolFailure):
    pass


@errors.replayable
class UnknownTool(ToolFailure):
    pass


@errors.replayable
class InvalidArguments(ToolFailure):
    pass


@errors.replayable
class ResultTooDeep(ToolFailure):
    """A tool answered with arrays and objects nested past what its ToolReturned may hold."""


@errors.replayable
class ResultTooLarge(ToolFailure):
    """A tool answered with more than one ToolReturned may hold (MAX_RESULT_BYTES)."""


# The most of a result one ToolReturned keeps, as JSON in UTF-8. A journal line past
# LINE_BYTES (the import's default line limit) would not import again, and every page and
# prompt that shows the call would carry it: half of it leaves room for the envelope.
MAX_RESULT_BYTES = LINE_BYTES // 2
# The most of an error's message kept: its start and its end, where a failed command's
# output says what went wrong (a test run's traceback, git's complaint).
MAX_ERROR_CHARS = 64 * 1024


@dataclass(frozen=True)
class Tool:
    """One capability. `fn` is called with the validated arguments as keywords.

    `retry_safe` says whether running it twice is harmless; the loop's automatic retries skip
    tools that are not (a second refund is not a retry). `outside` says its schema came from
    outside the project (an MCP server's): arguments are checked against it as against a
    hostile one, in bounded work (runtime/schemas.py). `identified`: `fn` also takes `call`,
    which call of the run this execution is (a `Call`, or None outside a session), for a tool
    that must answer a run of the call again (a resumed step's: its ToolReturned was never
    written) as it answered the first.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    timeout: float | None = DEFAULT_TIMEOUT
    retry_safe: bool = True
    outside: bool = False
    identified: bool = False
    _validator: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_validator", validator_for(self.parameters, self.outside))

    def spec(self) -> ToolSpec:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def validate(self, args: dict[str, Any]) -> None:
        try:
            error = relevant_error(self._validator, args)
        except Unusable as exc:
            raise InvalidArguments(
                f"{self.name}'s schema cannot check these arguments: {exc}"
            ) from None
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path)
            raise InvalidArguments(f"{where or 'arguments'}: {error.message}")


@dataclass(frozen=True)
class Call:
    """Which tool call of a run an execution is: the stream and the version of the event it
    follows (its ToolDispatched, or its retry's ToolRetryScheduled). A resumed step that runs
    the call again reaches it at the same place; no other call of the run does. Not the
    model's call id, which a model may give twice."""

    stream: str
    at: int

    @property
    def ref(self) -> str:
        """How a record a tool keeps with its side effect names the call (`<stream>@<at>`), so
        that the call run again finds it (an order's status change, a claim)."""
        return f"{self.stream}@{self.at}"


@dataclass(frozen=True)
class Outcome:
    """What one execution of a tool call came to: a result or an error, never both."""

    tool: str
    result: Any = None
    error: ErrorInfo | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None

    def observation(self) -> dict[str, Any]:
        if self.error is not None:
            return {
                "tool": self.tool,
                "error": {"type": self.error.type, "message": self.error.message},
            }
        return {"tool": self.tool, "result": self.result}


def failure(tool: str, exc: BaseException) -> Outcome:
    return Outcome(tool, error=errors.describe(exc))


def ran_into(tool: str, exc: BaseException) -> Outcome:
    """A tool's own failure as its outcome, told as an event can hold it. Only for a tool
    that ran (`execute`), whose recorded outcome a replay serves as it stands: a refusal
    (`Toolbox.check`, a done call's contract) is worked out again on every replay and must
    come out as it was recorded, before these limits too."""
    info = errors.describe(exc)
    message = flat.mended(info.message)  # a file name that is not UTF-8, quoted by a tool
    if len(message) > MAX_ERROR_CHARS:
        half = MAX_ERROR_CHARS // 2
        cut = len(message) - 2 * half
        message = f"{message[:half]}\n[... {cut:,} characters cut ...]\n{message[-half:]}"
    if message != info.message:
        info = ErrorInfo(type=info.type, message=message)
    return Outcome(tool, error=info)


class Toolbox:
    """The tools one agent holds, and the allowlist that says which of them it may use.

    The allowlist is enforced twice: `specs()` shows the model only allowed tools, and
    `check()` refuses an unlisted call at execution, since a model can name a tool it was
    never shown.
    """

    def __init__(self, tools: Iterable[Tool], allow: Iterable[str] | None = None) -> None:
        self.tools = {t.name: t for t in tools}
        self.allow = frozenset(self.tools if allow is None else allow)

    def specs(self) -> list[ToolSpec]:
        return [t.spec() for name, t in self.tools.items() if name in self.allow]

    def check(self, call: ToolCall, agent: str) -> Tool:
        """The tool to run for this call, or a ToolFailure saying why not."""
        tool = self.tools.get(call.name)
        if call.name not in self.allow:
            if tool is None:
                raise UnknownTool(f"there is no tool named {call.name!r}")
            raise NotAllowed(f"{agent} may not use {call.name!r}")
        if tool is None:
            raise UnknownTool(f"there is no tool named {call.name!r}")
        if UNREADABLE_ARGS in call.args:
            raise InvalidArguments(
                f"the arguments sent are {call.args[UNREADABLE_ARGS]}; send the call again with "
                "its arguments as one JSON object"
            )
        tool.validate(call.args)
        return tool


def answered(tool: Tool, result: Any) -> Outcome:
    """The tool's result as its outcome: a failure when it nests past VALUE_DEPTH, which its
    ToolReturned could not hold (a journal line's depth is bounded, journal.check_batch) and
    which would stop the loop writing it. The tool did run: the agent is told so. Its depth
    is counted as the append counts it (a tuple, a set, a dataclass nest like a list or an
    object), not as flat.deeper_than counts parsed JSON, which knows only dicts and lists."""
    if nests_deeper_than(result, VALUE_DEPTH):
        return failure(
            tool.name,
            ResultTooDeep(
                f"{tool.name} ran, but its result nests arrays and objects deeper than "
                f"{VALUE_DEPTH} levels, more than the journal keeps; it was not kept"
            ),
        )
    # One encoding serves twice: its size is what the journal will write (a lone surrogate
    # counts the three bytes of the U+FFFD it becomes), and it reads back as the value the
    # journal will give (tuples become lists, and so on).
    text = json.dumps(result, default=str, ensure_ascii=False)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_RESULT_BYTES:
        return failure(
            tool.name,
            ResultTooLarge(
                f"{tool.name} ran, but its result is {size:,} bytes as the journal writes it, "
                f"more than the {MAX_RESULT_BYTES:,} it keeps for one result; it was not "
                "kept"
            ),
        )
    scalar = result is None or isinstance(result, str | int | float | bool)
    # A name or a text of bytes that are not UTF-8 (a file an agent's test made) reads back
    # from the disk with lone surrogates, which no event can hold: the ToolReturned failed to
    # be written, and a resume ran the tool again into the same failure.
    value = flat.mended(result if scalar else json.loads(text))
    return Outcome(tool.name, result=value)


def execute(tool: Tool, args: dict[str, Any], call: Call | None = None) -> Outcome:
    """Run a checked tool with its timeout (an `identified` one told which `call` this is).
    Never raises for the tool's own failures."""
    if tool.identified:
        args = {**args, "call": call}  # the session's, never one an agent sent
    if tool.timeout is None:
        try:
            return answered(tool, tool.fn(**args))
        except Exception as exc:  # a tool's failure is an observation, whatever its type
            return ran_into(tool.name, exc)
    box: list[Outcome] = []

    def work() -> None:
        try:
            box.append(answered(tool, tool.fn(**args)))
        except Exception as exc:
            box.append(ran_into(tool.name, exc))

    # A thread, not the caller, so a hung tool cannot hang the loop. Python cannot kill the
    # thread; tools that run subprocesses enforce their own timeout and kill the child. It runs
    # in the caller's context: the children it starts are the caller's step's (children.py).
    context = contextvars.copy_context()
    worker = threading.Thread(
        target=context.run, args=(work,), name=f"tool-{tool.name}", daemon=True
    )
    worker.start()
    worker.join(tool.timeout)
    if not box:
        return failure(
            tool.name, ToolTimeout(f"{tool.name} gave no answer within {tool.timeout:g} s")
        )
    return box[0]


def schema(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    """A JSON schema for an object of named arguments (no others allowed)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }
