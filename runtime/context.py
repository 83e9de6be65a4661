"""Context assembly: the whole answer to "what does the model see this turn?"."""

from __future__ import annotations

from collections.abc import Sequence

from runtime.model import ChatMessage

Step = Sequence[ChatMessage]
"""One past turn: the assistant's message followed by the observations it produced."""

DEFAULT_LIMIT = 8_000


def marker(dropped: int) -> ChatMessage:
    noun = "step" if dropped == 1 else "steps"
    return ChatMessage(role="user", content=f"[{dropped} earlier {noun} dropped to fit the window]")


def assemble(
    system: str,
    task: str,
    history: Sequence[Step],
    fresh: Sequence[ChatMessage],
    limit: int = DEFAULT_LIMIT,
) -> list[ChatMessage]:
    """Build one turn's window: system, task, the newest history that fits, then `fresh`.

    The policy: the system prompt and the task are always kept; `fresh` (the last turn's calls
    and their observations, a nudge, new mail) always arrives; the history keeps its newest
    whole steps, oldest dropped first, and a marker says how many were dropped. Steps are kept
    or dropped whole, so a tool call is never separated from its result.

    The invariant this enforces is a bound on the kept history, not on the window:

        size(kept history) <= max(0, limit - size(system) - size(task) - size(fresh))

    where size counts characters. The window itself exceeds `limit` in exactly two ways:
    1. the parts that are always kept (system, task, fresh) are larger than `limit` by
       themselves — unbounded, since nothing cuts a long task or a large observation;
    2. history was dropped, and the marker's own characters come on top of the budget —
       bounded by the marker's length.
    """
    head = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=task)]
    room = limit - sum(m.size() for m in head) - sum(m.size() for m in fresh)
    kept: list[Step] = []
    for step in reversed(history):
        size = sum(m.size() for m in step)
        if size > room:
            break
        kept.append(step)
        room -= size
    kept.reverse()
    window = list(head)
    dropped = len(history) - len(kept)
    if dropped:
        window.append(marker(dropped))
    for step in kept:
        window.extend(step)
    window.extend(fresh)
    return window


def window_size(messages: Sequence[ChatMessage]) -> int:
    return sum(m.size() for m in messages)
