"""An agent's conversation as the trace rebuilds it from the journal, for its model calls' input
(`gen_ai.input.messages`): the task, then the answers, the tools' responses and the loop's
nudges, as many of the newest as the recorded window held (the system prompt is not journalled).

What the model was sent, not what it asked: a reply of more than loop.MAX_CALLS tool calls ran
the first MAX_CALLS only, and the loop told the agent so (AgentNudged); the next window holds
those calls, their answers and that word. A journal written before the cap has no AgentNudged
after such a reply: it ran them all, and its history keeps them all.

Bounded twice. A model call's input holds at most INPUT_PIECES pieces' worth of characters
(`TraceOptions.content_chars` each): the newest messages that fit, the older counted in
`minutes.window.left_out`. And the history kept between calls is what a later input can show:
the task and the newest messages, no more than fit the input's bound (an older one never fits
again: the messages in front of it only grow), no more than twice the widest input shown so far
and some (an input grows by what came since the last call, and by mail, which the agent's
events do not show: the slack keeps such a run's trace what it was), and at most KEEP. A
long-lived agent's state is the size of its window, not of its run (runtime/otel/fold_state.py
stores it between live pushes).
"""

from __future__ import annotations

from runtime.events import ModelResponded
from runtime.loop import MAX_CALLS
from runtime.otel import content
from runtime.otel.spans import AgentRun, finish_reasons

INPUT_PIECES = 64  # a model call's input: at most this many pieces' worth of characters
KEEP = 1_000  # the most messages kept after the task, whatever the inputs showed
SLACK = 16  # kept beyond twice the widest input shown


def answered(run: AgentRun | None, e: ModelResponded, limit: int) -> str:
    """A model's answer as its call's output (`gen_ai.output.messages`), cleaned; it joins the
    agent's history, and its calls' arguments are kept for their tools' spans."""
    calls = []
    if run is not None:
        # Only this reply's calls are dispatched next (a turn runs its own): the earlier ones'
        # arguments are no longer asked for, and kept they would grow with the run. (A cache:
        # a tool span whose arguments are not here cleans them again, to the same text.)
        run.asked = {}
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
    input's bound left out. Prunes what no later input can show."""
    run.ran = None  # a nudge comes before the next call, or not at all
    history = run.history
    newer = len(history) - 1
    keep = newer if messages is None else max(0, min(newer, messages - 2))
    room = INPUT_PIECES * limit
    # The newest that fit the room, as far back as this input or the history kept reaches.
    reach = max(keep, min(2 * max(run.widest, keep) + SLACK, KEEP))
    fit = used = 0
    for entry in reversed(history):
        if fit == min(reach, newer):
            break
        used += len(entry) + 1
        if used > room:
            break
        fit += 1
    shown = min(keep, fit)
    text = "[" + ",".join([history[0], *history[len(history) - shown :]] if shown else history[:1])
    run.widest = max(run.widest, shown)
    retain = min(2 * run.widest + SLACK, fit, KEEP)
    if newer > retain:
        del history[1 : len(history) - retain]
    return text + "]", keep - shown
