"""An agent's conversation as the trace rebuilds it from the journal, for its model calls' input
(`gen_ai.input.messages`): the task, then the answers, the tools' responses and the loop's
nudges, as many of the newest as the recorded window held (the system prompt is not journalled).

What the model was sent, not what it asked: a reply of more than loop.MAX_CALLS tool calls ran
the first MAX_CALLS only, and the loop told the agent so (AgentNudged); the next window holds
those calls, their answers and that word. A journal written before the cap has no AgentNudged
after such a reply: it ran them all, and its history keeps them all.

Bounded: a model call's input holds at most INPUT_PIECES pieces' worth of characters
(`TraceOptions.content_chars` each): the newest messages that fit, the older counted in
`minutes.window.left_out`.
"""

from __future__ import annotations

from runtime.events import ModelResponded
from runtime.loop import MAX_CALLS
from runtime.otel import content
from runtime.otel.spans import AgentRun, finish_reasons

INPUT_PIECES = 64  # a model call's input: at most this many pieces' worth of characters


def answered(run: AgentRun | None, e: ModelResponded, limit: int) -> str:
    """A model's answer as its call's output (`gen_ai.output.messages`), cleaned; it joins the
    agent's history, and its calls' arguments are kept for their tools' spans."""
    calls = []
    for c in e.tool_calls or []:
        args = content.clean(c.args, limit)
        calls.append((c.id, c.name, args))
        if run is not None and c.id:
            run.asked[c.id] = (c.args, args)  # the tool's span shows them again
    reasons = finish_reasons(e)
    text = content.clean(e.text, limit) if e.text else ""
    said = content.message_json(content.assistant_parts(text, calls))
    if run is not None:
        replied(run, said, calls, text)
    # The output is the same message with its finish reason, its last key.
    return "[" + content.with_key(said, "finish_reason", reasons[0] if reasons else None) + "]"


def replied(run: AgentRun, said: str, calls: list[tuple[str, str, str]], text: str) -> None:
    """The model's answer joins the history; when it asked for more calls than a turn runs,
    the same answer with the calls that would run is kept aside, for the nudge that says so."""
    run.history.append(said)
    run.ran = None
    if len(calls) > MAX_CALLS:
        ran = content.message_json(content.assistant_parts(text, calls[:MAX_CALLS]))
        run.ran = (len(run.history) - 1, ran)


def nudged(run: AgentRun, text: str) -> None:
    """The loop's word to the agent (AgentNudged): a user message of the next window. After a
    reply of too many calls, that reply showed the model only the calls that ran."""
    if run.ran is not None:
        at, ran = run.ran
        run.history[at] = ran
        run.ran = None
    run.history.append(content.message_json(content.text_part_message("user", text)))


def window(run: AgentRun, messages: int | None, limit: int) -> tuple[str, int]:
    """The input of a model call whose window held `messages` (the system prompt and the task
    among them; None: not recorded, all of it), as JSON text, and how many of its messages the
    input's bound left out."""
    run.ran = None  # a nudge comes before the next call, or not at all
    history = run.history
    newer = len(history) - 1
    keep = newer if messages is None else max(0, min(newer, messages - 2))
    room = INPUT_PIECES * limit
    shown = used = 0
    for entry in reversed(history):  # the newest that fit the room, no more than kept
        if shown == keep:
            break
        used += len(entry) + 1
        if used > room:
            break
        shown += 1
    text = "[" + ",".join([history[0], *history[len(history) - shown :]] if shown else history[:1])
    return text + "]", keep - shown
