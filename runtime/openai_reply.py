"""A chat-completions reply read into the answer's text, tool calls and usage; or, where it
cannot be used, the ModelError saying why, carrying what the call cost all the same.

A vendor bills a reply its model wrote, usable or not: one cut off mid-call, one not in the
protocol's shape, one too large to keep. Such a failure carries the call's usage
(`ModelError.usage`), which the agent loop journals on its ModelFailed and debits, as it does
an answer's (runtime/loop.py); where nothing says a model wrote anything (an error in a 200's
clothes, a body that is no JSON object), it carries none, and nothing is billed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from runtime.events import Usage
from runtime.model import ChatMessage, ModelError, ToolCall, ToolSpec
from runtime.openai_wire import (
    ArgumentsTooLarge,
    ModelProtocolError,
    UnreadableArguments,
    UnreadableName,
    estimate_usage,
    finish_reason,
    parse_message,
    parse_usage,
    plausible,
    snippet,
)
from runtime.tool_names import wire_name


def read(
    reply: dict[str, Any],
    messages: Sequence[ChatMessage],
    tools: Sequence[ToolSpec],
    max_tokens: int | None,
) -> tuple[str, list[ToolCall], Usage]:
    """The text, the tool calls (under our tools' names) and the usage of a 200's reply; or the
    ModelError saying why it cannot be used, with the usage it reported (`unusable`)."""
    try:
        text, calls = message_of(reply, max_tokens)
    except ModelError as error:
        error.usage = unusable(reply, messages, tools)
        raise
    ours = {wire_name(t["name"]): t["name"] for t in tools}
    calls = [c.model_copy(update={"name": ours.get(c.name, c.name)}) for c in calls]
    usage = plausible(parse_usage(reply.get("usage")), estimate_usage(messages, tools, text, calls))
    return text, calls, usage


def message_of(reply: dict[str, Any], max_tokens: int | None) -> tuple[str, list[ToolCall]]:
    """choices[0].message's text and tool calls, as the wire names them."""
    try:
        return parse_message(reply)
    except UnreadableArguments as error:
        cut = not isinstance(error, UnreadableName | ArgumentsTooLarge)  # those were read
        if finish_reason(reply) == "length" and cut:
            # A tool call cut off mid-arguments: the fix is a setting, so name it.
            limit = (
                f"the limit of {max_tokens} tokens (MINUTES_MODEL_MAX_TOKENS)"
                if max_tokens is not None
                else "the server's own limit (set MINUTES_MODEL_MAX_TOKENS to choose one)"
            )
            raise ModelProtocolError(f"{error}; the reply was cut off at {limit}") from None
        # Otherwise the model wrote them wrong, as small models do: the call goes back to it
        # refused, saying what it sent (tools.Toolbox.check), and it may send it again.
        return parse_message(reply, keep_unreadable=True)


def unusable(
    reply: dict[str, Any], messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]
) -> Usage | None:
    """What a reply that cannot be used cost: its usage report, read as any is (parse_usage,
    then plausible against an estimate of the prompt and of its choices as written); without
    one, that estimate, when it holds choices (a model wrote them); None when it holds neither
    (nothing says a model ran: a gateway's error sent with a 200)."""
    reported = parse_usage(reply.get("usage"))
    choices = reply.get("choices")
    if reported is None and not choices:
        return None
    written = json.dumps(choices, default=str) if choices else ""
    return plausible(reported, estimate_usage(messages, tools, written, []))


def too_large(raw: bytes, request: bytes, limit: int) -> ModelProtocolError:
    """The failure of a reply longer than `limit` bytes, which was not read to its end (nor its
    usage report, which comes last): billed at an estimate, four bytes a token, of the request
    and of what was read of the reply (less than was written), when it begins as a reply's JSON
    object does; at nothing otherwise (a page that is no reply)."""
    error = ModelProtocolError(
        f"the reply is larger than {limit // 1024} KiB, more than any model writes in one "
        "answer; it was not read (MINUTES_MODEL_MAX_TOKENS caps a reply): "
        f"{snippet(raw[:1000])}"
    )
    if raw.lstrip()[:1] == b"{":
        prompt, completion = math.ceil(len(request) / 4), math.ceil(len(raw) / 4)
        error.usage = Usage(
            total=prompt + completion, prompt=prompt, completion=completion, estimated="missing"
        )
    return error
