"""The OpenAI-compatible chat-completions wire format: our messages and tool specs to it, and a
reply back to text, tool calls and usage; a reply not in the protocol's shape is a
ModelProtocolError saying what is wrong with it."""

from __future__ import annotations

import json
import math
import urllib.parse
from collections.abc import Sequence
from typing import Any

from runtime import errors, flat, terminal
from runtime.events import LINE_BYTES, VALUE_DEPTH, Served, Usage
from runtime.model import (
    UNREADABLE_ARGS,
    ChatMessage,
    ModelError,
    ModelResponse,
    ToolCall,
    ToolSpec,
)
from runtime.tool_names import NAME_CHARS, TOOL_NAME, wire_name  # the protocol's name rules

# Levels of arrays and objects a call's arguments may nest: a journal line may nest 64, and the
# arguments sit a few levels into the ModelResponded that records them.
MAX_ARGS_DEPTH = VALUE_DEPTH
# The most bytes a call's arguments may be as the journal writes them (JSON in UTF-8), where
# the wire may be far shorter: a number such as 9e15 is 4 bytes there and 9000000000000000.0
# (18) in the journal, and a control character written raw in arguments read leniently is 1
# there and \u0001 (6). Larger arguments go back to the model refused (they are written in
# the ModelResponded, its ToolDispatched and a done call's AgentFinished).
MAX_ARGS_BYTES = LINE_BYTES // 4
# The most bytes a reply (its text, calls, usage and what the server said of itself) may be as
# its ModelResponded writes it: the rest of LINE_BYTES is room for the event's envelope, so the
# run's own export imports again. A reply of 1 MiB on the wire became a 3.8 MB line.
MAX_RECORD_BYTES = LINE_BYTES - 64 * 1024
SNIPPET_CHARS = 500  # how much of a bad body to quote: enough to read, not a whole HTML page
# The most tokens one figure of a call's usage counts for (about 16.8 million, so a call's
# total is at most twice that): past the largest context window on offer (10 million), and
# thousands of times a run's usual allowance, so a call reporting more still ends its run out
# of budget. Unbounded, two reports of 2**40 summed past what an event may carry
# (events.MAX_INT): the run's BudgetExhausted was refused, and it could neither end nor resume.
MAX_CALL_TOKENS = 2**24
# How far under our own estimate (estimate_usage) a reported total may be before it is taken
# for a figure that does not count this call (see plausible).
FLOOR_RATIO = 8


@errors.replayable
class ModelProtocolError(ModelError):
    """The server answered, but not in the shape the protocol promises."""


class UnreadableArguments(ModelProtocolError):
    """A tool call well formed but for its arguments, which are not a JSON object."""

    def __init__(self, message: str, name: str, call_id: str, said: str) -> None:
        super().__init__(message)
        self.name, self.call_id, self.said = name, call_id, said


class UnreadableName(UnreadableArguments):
    """A tool call to a name no tool can have (see TOOL_NAME); `name` is it escaped."""


class ArgumentsTooLarge(UnreadableArguments):
    """A tool call whose arguments, read, are more than MAX_ARGS_BYTES as the journal writes
    them."""


# --- translation to the wire -------------------------------------------------------------------


def wire_message(message: ChatMessage) -> dict[str, Any]:
    """One ChatMessage in the chat-completions request shape."""
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant":
        # Content "" rather than null: some servers answer 500 to a null content beside
        # tool calls.
        wire: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": wire_name(call.name), "arguments": json.dumps(call.args)},
                }
                for call in message.tool_calls
            ]
        return wire
    return {"role": message.role, "content": message.content}


def wire_tool(spec: ToolSpec) -> dict[str, Any]:
    """One ToolSpec in the chat-completions "tools" shape."""
    return {
        "type": "function",
        "function": {
            "name": wire_name(spec["name"]),
            "description": spec.get("description", ""),
            "parameters": spec.get("parameters", {"type": "object", "properties": {}}),
        },
    }


# --- translation from the wire -----------------------------------------------------------------


def parse_message(
    reply: dict[str, Any], keep_unreadable: bool = False
) -> tuple[str, list[ToolCall]]:
    """The text and tool calls of choices[0].message, or ModelProtocolError saying what is off.
    With `keep_unreadable`, a call whose arguments are not a JSON object is kept, with what was
    sent under UNREADABLE_ARGS, for the toolbox to refuse back to the model."""
    if "choices" not in reply:
        error = reply.get("error")
        hint = f" (it carries an error: {snippet(json.dumps(error))})" if error else ""
        raise ModelProtocolError(f"the reply has no 'choices'{hint}")
    choices = reply["choices"]
    if not isinstance(choices, list):
        raise ModelProtocolError(f"the reply's 'choices' is {type(choices).__name__}, not a list")
    if not choices:
        raise ModelProtocolError("the reply's 'choices' is empty")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise ModelProtocolError(f"choices[0] is {type(choice).__name__}, not an object")
    message = choice.get("message")
    if message is None:
        raise ModelProtocolError("choices[0] has no 'message'")
    if not isinstance(message, dict):
        raise ModelProtocolError(f"choices[0].message is {type(message).__name__}, not an object")
    content = message.get("content")
    if content is None:
        content = ""  # null content is normal when the model only calls tools
    if not isinstance(content, str):
        raise ModelProtocolError(
            f"choices[0].message.content is {type(content).__name__}, not a string"
        )
    raw_calls = message.get("tool_calls")
    if raw_calls is None:
        raw_calls = []
    if not isinstance(raw_calls, list):
        raise ModelProtocolError(
            f"choices[0].message.tool_calls is {type(raw_calls).__name__}, not a list"
        )
    return content, [
        parse_tool_call(raw, index, keep_unreadable) for index, raw in enumerate(raw_calls)
    ]


def parse_tool_call(raw: Any, index: int, keep_unreadable: bool = False) -> ToolCall:
    """One wire tool call as a ToolCall with its arguments decoded (see parse_message)."""
    try:
        return read_tool_call(raw, index)
    except UnreadableArguments as error:
        if not keep_unreadable:
            raise
        return ToolCall(id=error.call_id, name=error.name, args={UNREADABLE_ARGS: error.said})


def read_tool_call(raw: Any, index: int) -> ToolCall:
    """One wire tool call as a ToolCall with its arguments decoded."""
    where = f"tool_calls[{index}]"
    if not isinstance(raw, dict):
        raise ModelProtocolError(f"{where} is {type(raw).__name__}, not an object")
    function = raw.get("function")
    if not isinstance(function, dict):
        raise ModelProtocolError(f"{where} has no 'function' object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ModelProtocolError(f"{where} has no function name")
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id:
        # Some local servers omit ids. Numbering by position keeps them the same on every run,
        # which replay and resume rely on.
        call_id = f"call_{index}"
    if not TOOL_NAME.fullmatch(name):
        # Kept under its name escaped as a Python string writes it (no control character, no
        # newline) and cut short, which no tool has: the toolbox refuses it back to the model
        # as an unknown tool, and no finding or reason holds its controls.
        shown_name = repr(name[:NAME_CHARS])[1:-1] + ("..." if len(name) > NAME_CHARS else "")
        said = "sent to a name no tool has (a tool's is letters, digits, _, - and .)"
        message = f"tool call {where} names no tool: {shown_name!r}"
        raise UnreadableName(message, shown_name, call_id, said)
    arguments = function.get("arguments")

    def unreadable(
        why: str, said: str, kind: type[UnreadableArguments] = UnreadableArguments
    ) -> UnreadableArguments:
        message = f"the arguments of tool call {name!r} are {why}: {said}"
        return kind(message, name, call_id, f"{why}: {said}")

    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        # Some servers send nothing at all for a tool that takes no arguments.
        args: Any = {}
    elif isinstance(arguments, dict):
        args = arguments  # a few servers send the object itself rather than its JSON text
    elif isinstance(arguments, str):
        try:
            args = _ARGS_DECODER.decode(arguments)
            if flat.may_hold_surrogates(arguments):
                args = flat.mended(args)
        except (json.JSONDecodeError, _NotANumber) as error:
            raise unreadable(f"not valid JSON ({error})", snippet(arguments)) from None
        except ValueError:  # a whole number of more digits than Python converts
            why = f"not JSON we can read ({flat.NUMBER_TOO_LONG})"
            raise unreadable(why, snippet(arguments)) from None
        except RecursionError:
            raise unreadable("nested too deeply for JSON to read", snippet(arguments)) from None
    else:
        said = snippet(json.dumps(arguments))
        raise unreadable(f"{type(arguments).__name__}, not a JSON string", said)
    if not isinstance(args, dict):
        raise unreadable(f"not a JSON object but {type(args).__name__}", snippet(json.dumps(args)))
    if flat.deeper_than(args, MAX_ARGS_DEPTH):
        # Stored as they came, they were an event no page could read back (pydantic's JSON
        # stops at about 200 levels): the projectors stopped on it, and every page was a 500.
        said = snippet(arguments if isinstance(arguments, str) else json.dumps(arguments))
        raise unreadable(f"nested deeper than {MAX_ARGS_DEPTH} levels", said)
    written = _written(args)
    if written is None:
        # 1e400 reads as inf, and an object sent whole may hold the NaN the reply's own
        # reader let through: the journal writes either as null, so the loop went on from a
        # value its record does not hold, and replay differed.
        said = snippet(arguments if isinstance(arguments, str) else json.dumps(arguments))
        raise unreadable("not valid JSON (a number in them is NaN, Infinity or past 1e308)", said)
    if written > MAX_ARGS_BYTES:
        said = snippet(arguments if isinstance(arguments, str) else json.dumps(arguments))
        why = (
            f"too large to keep ({written:,} bytes as the journal writes them, more than the "
            f"{MAX_ARGS_BYTES:,} one call's may be: send less at a time)"
        )
        raise unreadable(why, said, ArgumentsTooLarge)
    return ToolCall(id=call_id, name=name, args=args)


class _NotANumber(ValueError):
    """NaN or Infinity, which Python's json reads and JSON has not."""


def _not_a_number(name: str) -> Any:
    raise _NotANumber(f"{name} is not a number JSON allows")


def _written(args: dict[str, Any]) -> int | None:
    """The arguments' size in bytes as the journal writes them (JSON in UTF-8), or None when a
    number in them is one JSON cannot write (NaN or infinite)."""
    try:
        text = json.dumps(args, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return None
    return len(text.encode(errors="replace"))


# strict=False admits raw newlines and tabs inside strings, which small models write (the
# arguments are checked against the tool's schema before any use); NaN and Infinity, which
# Python's json reads and JSON has not, are refused.
_ARGS_DECODER = json.JSONDecoder(strict=False, parse_constant=_not_a_number)


def recordable(response: ModelResponse) -> ModelResponse:
    """`response`, or ModelProtocolError when its ModelResponded would be a journal line past
    what an import of the run reads (MAX_RECORD_BYTES of it, measured as it is written): with
    the reply's usage, as it was written, and paid for, all the same."""
    size = len(response.model_dump_json().encode())
    if size > MAX_RECORD_BYTES:
        error = ModelProtocolError(
            f"the reply is {size:,} bytes as the journal writes it (its text and tool calls), "
            f"more than the {MAX_RECORD_BYTES:,} one event may hold for the run's export to "
            "import again; it was not kept (MINUTES_MODEL_MAX_TOKENS caps a reply)"
        )
        error.usage = response.usage
        raise error
    return response


def parse_usage(raw: Any) -> Usage | None:
    """The server's token counts, or None when it reported none (or only zeros).

    Usage is bookkeeping, not the answer: a malformed usage block is treated as absent (and
    then estimated) rather than failing a reply whose content is fine. A figure that is not a
    whole number of at least 0 is missing; one past MAX_CALL_TOKENS counts as MAX_CALL_TOKENS
    (the most a call is charged, never less than the server said up to there), and the usage
    says so (estimated "capped"); and the total is at least the prompt and the completion
    together, which a server reporting a total of 1 beside millions would otherwise have the
    budget debit (its parts are what it bills, and what a price is put on).
    """
    if not isinstance(raw, dict):
        return None
    figures = [raw.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")]
    prompt, completion, reported = map(_count, figures)
    total = max(reported or 0, (prompt or 0) + (completion or 0))
    if total <= 0:
        return None
    capped = any(_count(f) == MAX_CALL_TOKENS and f != MAX_CALL_TOKENS for f in figures)
    return Usage(
        total=total, prompt=prompt, completion=completion, estimated="capped" if capped else None
    )


def plausible(usage: Usage | None, estimate: Usage) -> Usage:
    """The usage to debit for a call: the server's (parse_usage), or our estimate, said to be
    one, where it reported none or a total under 1/FLOOR_RATIO of the estimate. No tokenizer
    packs FLOOR_RATIO * 4 characters of chat into a token on average, so a total below that is
    not a count of this call: it says no more than no report does, and is replaced whole (a
    floor under its total left a prompt and completion of 0 beside a total of 54, priced at 0)."""
    if usage is None:
        return estimate.model_copy(update={"estimated": "missing"})
    if usage.total < math.ceil(estimate.total / FLOOR_RATIO):
        return estimate.model_copy(update={"estimated": "implausible"})
    return usage


def parse_served(reply: dict[str, Any], base_url: str, asked: str | None = None) -> Served:
    """Who answered: the reply's model, id and finish reason (each only when it is a string),
    the server's host and port from the base URL (never its path or credentials), and the
    model name the request asked for."""

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) and value else None

    choices = reply.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else {}
    url = urllib.parse.urlsplit(base_url)
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:  # a port that is not a number: say nothing rather than fail the answer
        port = None
    return Served(
        model=text(reply.get("model")),
        response_id=text(reply.get("id")),
        finish_reason=text(first.get("finish_reason")) if isinstance(first, dict) else None,
        server_address=url.hostname or None,
        server_port=port,
        asked=asked or None,
    )


def estimate_usage(
    messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], text: str, calls: list[ToolCall]
) -> Usage:
    """A rough token count for a server that reports none: about four characters a token.

    This is an ESTIMATE, not a measurement. Budgets debit `total`, so a call must never cost
    zero; each side counts at least one token.
    """
    prompt_chars = sum(m.size() for m in messages) + sum(len(json.dumps(t)) for t in tools)
    completion_chars = len(text) + sum(len(c.name) + len(json.dumps(c.args)) for c in calls)
    prompt = max(1, math.ceil(prompt_chars / 4))
    completion = max(1, math.ceil(completion_chars / 4))
    return Usage(total=prompt + completion, prompt=prompt, completion=completion)


def _count(value: Any) -> int | None:
    """A token count if `value` is a non-negative integer (bool is not), at most
    MAX_CALL_TOKENS; else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return min(value, MAX_CALL_TOKENS)


def snippet(raw: bytes | str) -> str:
    """The start of a body, on one line, for an error message: its control characters escaped
    (ESC as \\x1b, terminal.plain), as what quotes it is journalled and may be shown on a
    page or a terminal that is not the command line's."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    text = " ".join(text.split())
    text = text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "..."
    return terminal.plain(text)


def finish_reason(reply: dict[str, Any]) -> Any:
    """Why the server stopped writing choices[0] ("stop", "length", ...); None if unsaid."""
    choices = reply.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0].get("finish_reason")
    return None


def named_tool(text: str, names: Sequence[str]) -> str | None:
    """The tool a free-text answer names: the earliest mention wins, the longer name on a tie
    ("run_tests" over "run"); None when it names none."""
    lowered = text.lower().replace("`", "")
    found: list[tuple[int, int, str]] = []
    for name in names:
        for spelling in {name.lower(), name.lower().replace("_", " ")}:
            at = lowered.find(spelling)
            if at >= 0:
                found.append((at, -len(name), name))
    return min(found)[2] if found else None


def add_usage(a: Usage, b: Usage) -> Usage:
    """Two requests' usage as one call's: estimated when either is."""

    def both(x: int | None, y: int | None) -> int | None:
        return None if x is None and y is None else (x or 0) + (y or 0)

    return Usage(
        total=a.total + b.total,
        prompt=both(a.prompt, b.prompt),
        completion=both(a.completion, b.completion),
        estimated=a.estimated or b.estimated,
    )
