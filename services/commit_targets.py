"""Where a decision on a parked conflict writes: the registry of commit targets.

A parked conflict's `commit` names its target's kind (`commit["service"]`): the review service
(services/review.py) knows only the journal's own facts ("facts"); an app that parks conflicts on
its own state registers its commit function, and how to read what the target holds now, in its
AppConfig.ready() (the support desk's orders: desk/apps.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from journal_store.journal import DjangoJournal
from runtime.events import ConflictParked

# Write `value` for the parked conflict where its `commit` says, by compare-and-swap from the
# commit's version, as decided by `by`; what was written ({"service", "key", "version"}).
# Raises ConflictMoved when the target moved since the conflict was parked, ConflictError when
# the value is not one the target can hold. Runs inside the decision's transaction.
CommitTarget = Callable[[ConflictParked, Any, str, DjangoJournal], dict[str, Any]]
TARGETS: dict[str, CommitTarget] = {}


@dataclass(frozen=True)
class Current:
    """What the fact a conflict is about holds now, shown beside the claims: its value, its
    version (a decision commits from the version the conflict was parked at), who set it."""

    value: Any
    version: int
    by: str = ""
    known: bool = True  # False: the target has no value for the predicate yet


# The fact's current value where a conflict's `commit` says (commit, subject, predicate).
CurrentValue = Callable[[dict[str, Any], str, str], Current]
READERS: dict[str, CurrentValue] = {}
# A fact to read where a conflict's `commit` says: (commit, subject, predicate).
Asked = tuple[dict[str, Any], str, str]
# The current values of several, in one read where the kind can: a page of conflict cards asks
# for each card's, and read one by one each card cost its own round trips.
CurrentValues = Callable[[Sequence[Asked]], list[Current]]
MANY_READERS: dict[str, CurrentValues] = {}


# What one key of a kind is, in a reviewer's words ("order" for "orders"): the pages say "the
# status of order o-1a2b", where the kind's own name read as a word out of place.
NAMES: dict[str, str] = {}


def register_commit_target(
    kind: str,
    commit: CommitTarget,
    current: CurrentValue | None = None,
    name: str = "",
    currents: CurrentValues | None = None,
) -> None:
    """Let decisions on conflicts whose `commit["service"]` is `kind` write through `commit`,
    show what the target holds now through `current` (through `currents` for a page of
    conflicts at once, where the kind can read them together), and call one of its keys a
    `name`. Registering the same functions again is harmless (ready() may run more than once)."""
    if TARGETS.get(kind, commit) is not commit:
        raise ValueError(f"a commit target {kind!r} is registered already")
    TARGETS[kind] = commit
    if current is not None:
        READERS[kind] = current
        MANY_READERS.pop(kind, None)  # another reader: the many reader no longer reads as it
    if currents is not None:
        MANY_READERS[kind] = currents
    if name:
        NAMES[kind] = name


def target_named(commit: dict[str, Any]) -> str:
    """The key a conflict's `commit` writes, named as its kind registered it ("order o-1a2b");
    a kind registered without a name (or not here) by the kind itself."""
    kind = str(commit.get("service") or "facts")
    return f"{NAMES.get(kind, kind)} {commit.get('key', '')}".rstrip()


def current_value(commit: dict[str, Any] | None, subject: str, predicate: str) -> Current | None:
    """What the conflict's fact holds now, read from its commit target (from the journal's
    fact `subject-<subject>` when it commits nowhere); None when nothing holds it."""
    return current_values([(commit, subject, predicate)])[0]


def current_values(
    asked: Sequence[tuple[dict[str, Any] | None, str, str]],
) -> list[Current | None]:
    """`current_value` of each (commit, subject, predicate), in order: those of one kind of
    target read together where it registered how (`currents`), else one by one."""
    found: list[Current | None] = [None] * len(asked)
    by_kind: dict[str, list[tuple[int, Asked]]] = {}
    for n, (commit, subject, predicate) in enumerate(asked):
        kind = str((commit or {}).get("service") or "facts")
        target = commit or {"service": "facts", "key": subject}
        by_kind.setdefault(kind, []).append((n, (target, subject, predicate)))
    for kind, items in by_kind.items():
        reader = READERS.get(kind)
        if reader is None:
            continue
        many = MANY_READERS.get(kind)
        if many is not None:
            currents = many([a for _, a in items])
        else:
            currents = [reader(*a) for _, a in items]
        for (n, _), current in zip(items, currents, strict=True):
            found[n] = current if current.version > 0 else None
    return found
