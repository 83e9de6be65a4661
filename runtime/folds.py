"""Folds: views as reducers whose state is plain JSON.

A fold starts from an empty state, takes one event at a time, and gives its result at any
point. Because the state is JSON, a projector can store it beside its checkpoint and apply only
the new events later — and a rebuild from the first event must give exactly the same result.
The pure functions in `views` and `diagnose` are these folds run over a whole list.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, ClassVar

from runtime.journal import Recorded

State = dict[str, Any]


class Fold:
    """A view as a reducer. Subclasses keep every piece of state JSON-serializable."""

    name: ClassVar[str] = "fold"
    kinds: ClassVar[frozenset[str] | None] = None  # the kinds `step` looks at; None: all

    def start(self) -> State:
        return {}

    def step(self, state: State, rec: Recorded) -> None:
        raise NotImplementedError

    def result(self, state: State) -> Any:
        raise NotImplementedError


def run(fold: Fold, records: Iterable[Recorded]) -> Any:
    state = fold.start()
    feed(fold, state, records)
    return fold.result(state)


def feed(fold: Fold, state: State, records: Iterable[Recorded]) -> None:
    """Step the fold through the records it looks at."""
    kinds = fold.kinds
    for rec in records:
        if kinds is None or rec.event.kind in kinds:
            fold.step(state, rec)


def key(*parts: object) -> str:
    """A JSON object key made of several parts (JSON keys must be strings)."""
    return json.dumps(parts, separators=(",", ":"))


def unkey(text: str) -> list[Any]:
    parts: list[Any] = json.loads(text)
    return parts
