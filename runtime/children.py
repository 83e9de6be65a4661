"""The child processes this process runs for its work (the harness's git, agent code in the
sandbox), each in a process group of its own, so that a holder that lost its lease can end them.

A worker whose step lease was taken over (or ran out unrenewed) must not go on changing a
workspace that another worker may now drive: a tool run of its own could still write there, and
a git merge or commit land beside the new driver's work. `end_all` kills the process group of
every child running now (SIGKILL to the group: what the child started dies with it), and no
child starts after that until the holding whose lease was lost is over (`reopen`): a harness
that was between two git commands when the lease went would otherwise start the next one. The
caller of a child ended so, or refused, gets `Ended`, not the exit status of a command that
failed on its own, which callers take as an answer (a merge that conflicts is aborted with more
git, a pytest killed by a signal is run again); and the holder's next fenced append is refused
anyway.

Per process, not per step: a worker (Celery's prefork pool) runs one step or one specialist at a
time in a process, and their children run on the flight's own thread.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

P = TypeVar("P", bound="subprocess.Popen[Any]")

WHY = (
    "this worker no longer holds the lease its work runs under (taken over, or run out while "
    "it could not be renewed), and another worker may be driving that work now"
)

_running: set[subprocess.Popen[Any]] = set()
_ended: set[subprocess.Popen[Any]] = set()  # killed by end_all; their callers not told yet
# The holdings whose lease was lost and that are not over: while there is one, nothing starts.
# Each holding's own token, so that one ending (a specialist run inline by an eager worker)
# does not reopen what another's lost lease closed.
_closed_by: set[object] = set()
_lock = threading.Lock()


class Ended(Exception):
    """A child process killed, or not started, because its holder's lease was lost."""


@contextlib.contextmanager
def started(what: str, start: Callable[[], P]) -> Iterator[P]:
    """The process `start()` starts (in a process group of its own: start_new_session=True),
    counted among this process's children while the block runs. Raises Ended, naming `what`,
    instead of starting it while a lost lease's holding is under way; and as the block ends
    if `end_all` killed it meanwhile (the block saw it end as killed), over what the block
    raised."""
    with _lock:
        if _closed_by:
            raise Ended(f"{what} was not started: {WHY}")
        # Under the lock: `end_all` either finds it running, or comes first and it is refused.
        proc = start()
        _running.add(proc)
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


def _forget(proc: subprocess.Popen[Any]) -> bool:
    """No longer counted; whether `end_all` killed it."""
    with _lock:
        _running.discard(proc)
        killed = proc in _ended
        _ended.discard(proc)
    return killed


def end_all(by: object) -> int:
    """Kill (SIGKILL, each one's process group) the children running now, and start none until
    `reopen(by)`; how many there were. `by`: the holding whose lease was lost. Called from
    another thread (the heartbeat that found the lease lost) while the children's callers wait
    on them: each sees its child end, and raises Ended."""
    with _lock:
        _closed_by.add(by)
        procs = list(_running)
        _ended.update(procs)
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
                os.killpg(proc.pid, signal.SIGKILL)
    return len(procs)


def reopen(by: object) -> None:
    """The holding `by` is over: children may start again (unless another lost its lease)."""
    with _lock:
        _closed_by.discard(by)


def running() -> int:
    """How many children are counted now."""
    with _lock:
        return len(_running)
