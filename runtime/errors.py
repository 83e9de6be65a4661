"""Errors that replay: the registry of exception types a journal may name, and their rebuilding.

A journal records a failure as its type's name and its message (`ErrorInfo`). A replay, or a
resume inside the record, raises it again where the live run raised it, so whatever caught it
then catches it now. A type registered here comes back as itself: an instance carrying the
recorded message (its constructor is not called, so attributes it would set are absent), and
`except` and `isinstance` work as they did live. A name nobody registered comes back as a
`ReplayedError` that keeps the recorded name, so journalling it again writes the same facts.

The runtime registers its own types; a team registers its errors with `@replayable` on the
class, which runs when the team's module is imported (before any of its runs is driven).
Names are the registry's keys, as journals record them: two types of one name cannot both be
registered.

May import `runtime.events` only.
"""

from __future__ import annotations

from typing import TypeVar

from runtime.events.base import ErrorInfo

E = TypeVar("E", bound=type[Exception])

_TYPES: dict[str, type[Exception]] = {}


class ReplayedError(Exception):
    """A recorded error whose type is not registered: it keeps the recorded name and message."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


def replayable(cls: E) -> E:
    """Register an exception type (a class decorator): a journal naming it rebuilds it."""
    taken = _TYPES.get(cls.__name__)
    if taken is not None and taken is not cls:
        raise ValueError(
            f"{cls.__module__}.{cls.__qualname__}: the replayable name {cls.__name__!r} is "
            f"taken by {taken.__module__}.{taken.__qualname__}"
        )
    _TYPES[cls.__name__] = cls
    return cls


def registered(name: str) -> type[Exception] | None:
    return _TYPES.get(name)


def rebuild(
    info: ErrorInfo,
    kind: type[Exception] = Exception,
    fallback: type[ReplayedError] = ReplayedError,
) -> Exception:
    """The recorded error as an exception to raise: its registered type when that is a `kind`,
    otherwise a `fallback` (a ReplayedError that is also a `kind`, for the catchers)."""
    cls = _TYPES.get(info.type)
    if cls is None or not issubclass(cls, kind):
        return fallback(info)
    exc = cls.__new__(cls)
    exc.args = (info.message,)
    return exc


def describe(exc: BaseException) -> ErrorInfo:
    """What a journal records of an error: a replayed one as it was recorded."""
    if isinstance(exc, ReplayedError):
        return exc.info
    return ErrorInfo(type=type(exc).__name__, message=str(exc))


def recorded_as(info: ErrorInfo, cls: type[Exception]) -> bool:
    """Whether a recorded error is a `cls` (a registered subclass counts)."""
    found = _TYPES.get(info.type)
    return found is not None and issubclass(found, cls)
