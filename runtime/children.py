"""The child processes this process runs for its work (the harness's git, agent code in the
sandbox), each in a process group of its own, so that a holder that lost its lease can end them.

A worker whose step lease was taken over (or ran out unrenewed) must not go on changing a
workspace that another worker may now drive: a tool run of its own could still write there, and
a git merge or commit land beside the new driver's work. `end(by)` kills the process group of
every child the holding `by` has running now (SIGKILL to the group: what the child started dies
with it), and none of its children starts after that until the holding is over (`reopen`): a
harness that was between two git commands when the lease went would otherwise start the next
one. The caller of a child ended so, or refused, gets `Ended`, not the exit status of a command
that failed on its own, which callers take as an answer (a merge that conflicts is aborted with
more git, a pytest killed by a signal is run again); and the holder's next fenced append is
refused anyway.

Per holding, not per process: a worker on a pool of threads (Celery's `-P threads`) runs steps
of several runs at once in one process, and one run's lost lease killed the others' git and
sandboxed runs. A child belongs to the holding current where it starts (`holding()`, a context
variable): the holder enters its holding (`enter`) on its own thread, and the threads its work
starts carry it (a tool's thread, a specialist's, a warm flight's, which `adopt`s the holding of
each step that drives it). A child started outside any holding (a thread it did not reach) is
nobody's to keep: it is ended with any holding's lost lease, as every child was before.

Holdings nest (`Holding`, made by `nested()` under the one current where it is made): a
specialist an eager worker runs inline, inside a step, holds leases of its own, and its
children are its holding's; they are ended with its lease, and with the step's too. A holding
of their own alone, the step's lost lease left them running beside the run's new driver.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

P = TypeVar("P", bound="subprocess.Popen[Any]")


class Child(Protocol):
    """What is kept of a child: its pid, which is its process group's too."""

    @property
    def pid(self) -> int: ...


WHY = (
    "this worker no longer holds the lease its work runs under (taken over, or run out while "
    "it could not be renewed), and another worker may be driving that work now"
)

# The holding whose work runs here (None: none). Each holding is its own token, so that one
# ending (a specialist run inline by an eager worker) does not reopen what another's closed.
_holding: ContextVar[object | None] = ContextVar("children_holding", default=None)
_running: dict[Child, object | None] = {}  # each child, and its holding
_ended: set[Child] = set()  # killed by end; their callers not told yet
# The holdings whose lease was lost (or is overdue) and that are not over, each with how many
# of its children were ended or refused since: what `reopen` says.
_closed_by: dict[object, int] = {}
_lock = threading.Lock()


class Holding:
    """A holding inside another (`parent`: the one current where it was made, None at the
    top): ending the parent ends its children, and starts none of them until it reopens."""

    def __init__(self, parent: object | None) -> None:
        self.parent = parent


def nested() -> Holding:
    """A new holding, inside the one current here."""
    return Holding(_holding.get())


def _within(owner: object | None) -> list[object]:
    """`owner` and the holdings it is nested in, innermost first."""
    chain: list[object] = []
    while owner is not None and owner not in chain:
        chain.append(owner)
        owner = getattr(owner, "parent", None)
    return chain


def holding() -> object | None:
    """The holding the children started here belong to."""
    return _holding.get()


def enter(by: object | None) -> object | None:
    """Make `by` the holding of the children started from here on, in this thread (and the
    threads it starts that carry its context); what it was, for `enter` to put back."""
    before = _holding.get()
    _holding.set(by)
    return before


def adopt(by: object | None) -> None:
    """The same, where nothing is to be put back: a thread of the work's own (a warm flight's,
    driven by one step's holding after another)."""
    _holding.set(by)


class Ended(Exception):
    """A child process killed, or not started, because its holder's lease was lost."""


@contextlib.contextmanager
def started(what: str, start: Callable[[], P]) -> Iterator[P]:
    """The process `start()` starts (in a process group of its own: start_new_session=True),
    counted among the children of the holding current here while the block runs. Raises Ended,
    naming `what`, instead of starting it while that holding's lease is lost (outside any
    holding: while any is); and as the block ends if `end` killed it meanwhile (the block saw
    it end as killed), over what the block raised."""
    by = _holding.get()
    with _lock:
        _refuse(what, by)
        # Under the lock: `end` either finds it running, or comes first and it is refused.
        proc = start()
        _running[proc] = by
    try:
        yield proc
    except Exception as exc:
        if _forget(proc):
            raise Ended(f"{what} was ended: {WHY}") from exc
        raise
    except BaseException:
        _forget(proc)
        raise
    if _forget(proc):
        raise Ended(f"{what} was ended: {WHY}")


def _refuse(what: str, by: object | None) -> None:
    """Under the lock: Ended, if holding `by`'s lease is lost (outside any holding: any is)."""
    closing = [h for h in _within(by) if h in _closed_by] if by is not None else [*_closed_by]
    if closing:
        for h in closing:
            _closed_by[h] += 1
        raise Ended(f"{what} was not started: {WHY}")


def check(what: str) -> None:
    """Raises Ended, naming `what`, where `started` would refuse to start it: for a child that
    code of another's starts (the MCP SDK starts its servers itself), before it does."""
    with _lock:
        _refuse(what, _holding.get())


def join(what: str, child: Child) -> None:
    """Count `child`, started (in a process group of its own) by code of another's, among the
    children of the holding current here, until `leave(child)`. Where that holding's lease was
    lost since `check`, its group is killed and Ended raised: the caller is to reap it."""
    with _lock:
        try:
            _refuse(what, _holding.get())
        except Ended:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            raise
        _running[child] = _holding.get()


def leave(child: Child) -> bool:
    """No longer counted (it ended, or is ending); whether `end` killed it."""
    return _forget(child)


def _forget(proc: Child) -> bool:
    """No longer counted; whether `end` killed it."""
    with _lock:
        _running.pop(proc, None)
        killed = proc in _ended
        _ended.discard(proc)
    return killed


def end(by: object) -> int:
    """Kill (SIGKILL, each one's process group) the children of holding `by` running now (and
    of the holdings nested in it, and those of no holding), and start none of them until
    `reopen(by)`; how many there were.
    `by`: the holding whose lease was lost. Called from another thread (the heartbeat that
    found the lease lost) while the children's callers wait on them: each sees its child end,
    and raises Ended. Another holding's children go on."""
    with _lock:
        procs = [proc for proc, owner in _running.items() if owner is None or by in _within(owner)]
        _closed_by[by] = _closed_by.get(by, 0) + len(procs)
        _ended.update(procs)
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
                os.killpg(proc.pid, signal.SIGKILL)
    return len(procs)


def reopen(by: object) -> int:
    """The holding `by` is over (or its lease, overdue, turned out to be still its own): its
    children may start again. How many of them were ended or refused since `end(by)`: their
    callers were told Ended, so a holder that goes on would take that for their own failure."""
    with _lock:
        return _closed_by.pop(by, 0)


def running(by: object | None = None) -> int:
    """How many children are counted now (of holding `by`, when given)."""
    with _lock:
        return sum(1 for owner in _running.values() if by is None or owner is by)
