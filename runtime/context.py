"""Context assembly: the whole answer to "what does the model see this turn?"."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from runtime.model import ChatMessage

Step = Sequence[ChatMessage]
"""One past turn: the assistant's message followed by the observations it produced."""

DEFAULT_LIMIT = 8_000


class History:
    """A loop's past steps, oldest first, each measured once as it is added.

    Every turn's window walks back over the newest steps that fit. Measuring each of them
    again at every turn, and summing the window again for its ModelCalled, cost 7% of a cold
    step that replays a 20,000-event run (bench/collector.py, docs/benchmarks.md). A step must
    not change once it is added (the loop adds a turn's step when the next turn begins).
    """

    def __init__(self, steps: Iterable[Step] = ()) -> None:
        self.steps: list[Step] = []
        self.sizes: list[int] = []
        self.pruned = 0  # the steps before this one were let go of (`prune`)
        for step in steps:
            self.append(step)

    @classmethod
    def behind(cls, places: int, steps: Iterable[Step]) -> History:
        """`steps` behind `places` empty places (the steps of a snapshot's loop that no window
        shows again), the places made at once: adding them one by one, measured, cost a cold
        step 6 ms at 20,000 events, growing with the run."""
        history = cls(steps)
        history.steps[:0] = [[] for _ in range(places)]
        history.sizes[:0] = [0] * places
        return history

    def prune(self, room: int) -> None:
        """Let go of the steps no later window can show, keeping their places and sizes.

        A window keeps the newest whole steps that fit its room, which is never more than
        `room` (the window less the system prompt and the task), and history only grows at its
        end: once the newest steps fill `room`, the step that does not fit behind them stops
        every later window's walk back, and the steps before it are never looked at again
        (the argument `runtime.loop.kept_steps` makes for snapshots). Without this a long
        loop's history held every message of the run."""
        used = 0
        for i in range(len(self.steps) - 1, self.pruned - 1, -1):
            used += self.sizes[i]
            if used > room:
                for j in range(self.pruned, i):
                    self.steps[j] = ()
                self.pruned = max(self.pruned, i)
                return

    def append(self, step: Step) -> None:
        self.steps.append(step)
        self.sizes.append(sum(m.size() for m in step))

    def __len__(self) -> int:
        return len(self.steps)

    def newest(self) -> Iterable[tuple[Step, int]]:
        """The steps newest first, each with its size."""
        return zip(reversed(self.steps), reversed(self.sizes), strict=True)


@lru_cache(maxsize=256)
def head(system: str, task: str) -> tuple[ChatMessage, ChatMessage]:
    """The two messages every window of a loop opens with. Built once per loop's prompt and
    task rather than at every turn; messages are frozen, so the two are shared."""
    return ChatMessage(role="system", content=system), ChatMessage(role="user", content=task)


def marker(dropped: int) -> ChatMessage:
    noun = "step" if dropped == 1 else "steps"
    return ChatMessage(role="user", content=f"[{dropped} earlier {noun} dropped to fit the window]")


def assemble(
    system: str,
    task: str,
    history: Sequence[Step] | History,
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
    return counted(system, task, history, fresh, limit)[0]


def counted(
    system: str,
    task: str,
    history: Sequence[Step] | History,
    fresh: Sequence[ChatMessage],
    limit: int = DEFAULT_LIMIT,
) -> tuple[list[ChatMessage], int]:
    """`assemble`'s window and its size (`window_size`), counted as it is built."""
    opening = head(system, task)
    always = sum(m.size() for m in opening) + sum(m.size() for m in fresh)
    room = limit - always
    newest = (
        history.newest()
        if isinstance(history, History)
        else ((step, sum(m.size() for m in step)) for step in reversed(history))
    )
    kept: list[Step] = []
    for step, size in newest:
        if size > room:
            break
        kept.append(step)
        room -= size
    kept.reverse()
    window = list(opening)
    chars = limit - room  # the always-kept parts and the kept steps
    dropped = len(history) - len(kept)
    if dropped:
        note = marker(dropped)
        window.append(note)
        chars += note.size()
    for step in kept:
        window.extend(step)
    window.extend(fresh)
    return window, chars


def window_size(messages: Sequence[ChatMessage]) -> int:
    return sum(m.size() for m in messages)


def tools_digest(specs: Sequence[Mapping[str, Any]]) -> bytes:
    """The tools offered to the model, hashed once per loop (their names, descriptions and
    schemas): a schema edited between a run and its replay is a different prompt."""
    text = json.dumps(list(specs), sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def window_digest(window: Sequence[ChatMessage], tools: bytes) -> str:
    """What the model was shown on a turn, hashed (ModelCalled.window_digest): its entries in
    order, and the tools. The count and size of a window say when a replay's prompt grew or
    shrank; this says when it changed at all (a system prompt or a tool's result edited to the
    same length). 128 bits: the check is against a second window matching a recorded one,
    which takes 2**128 tries, not against any two windows colliding."""
    h = hashlib.sha256(tools)
    for message in window:
        h.update(message.digest)
    return h.hexdigest()[:32]
