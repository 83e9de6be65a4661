"""The command line drives a run under the run's lease, as a worker's step does.

A worker's step takes the run's lease (`lease-<run>`: runtime/coordination/leases.py) before it
writes, fences every append by the lease's epoch, and renews it from a heartbeat while it
works (services/steps.py). `fly`, `resume`, `fork --go` and `zi` took none, so a resume of a
run another process was driving at that moment (a worker, another `resume` of the same journal)
drove it too, the two writing one run's turns between them. They now take the same lease, at
the run's version, and hold it the same way (runtime/coordination/holding.py); one that finds
it held by somebody else is refused before anything is written, naming the holder and until
when.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from runtime import streams
from runtime.cli_stop import operator
from runtime.coordination import holding
from runtime.coordination.leases import Leases, standing
from runtime.fenced import Fenced
from runtime.flight import FlightError
from runtime.journal import Journal, StaleEpoch

# The workers' lease on a step (config/settings.py STEP_LEASE_SECONDS), from the same variable:
# renewed every third of it, so a command killed mid-run lets others take the run within it.
LEASE_VARIABLE = "MINUTES_STEP_LEASE_SECONDS"
LEASE_SECONDS = 30
COMMAND_LINE = " (command line)"  # how a command line's holder name ends


class LeaseHeld(Exception):
    """Somebody else holds the run's lease: nothing was written; the same command may go
    through once they let it go, or once it runs out."""


class LeaseTaken(Exception):
    """The run's lease was taken from this command while it drove the run (not renewed in
    time): it stopped where it was, and what it wrote before stands."""


def lease_seconds(environ: Mapping[str, str]) -> int:
    """The lease's length, as the workers read it, or FlightError naming the variable."""
    raw = environ.get(LEASE_VARIABLE, "")
    if raw == "":
        return LEASE_SECONDS
    try:
        value = int(raw)
    except ValueError:
        raise FlightError(f"{LEASE_VARIABLE} must be a whole number, got {raw!r}") from None
    if value < 1:
        raise FlightError(f"{LEASE_VARIABLE} must be at least 1, got {value}")
    return value


def holder() -> str:
    """Who drives, as the lease names it: the person, this host and process, and that it is
    the command line (a worker is host:pid:task)."""
    return f"{operator()}@{socket.gethostname()}:{os.getpid()}{COMMAND_LINE}"


def when(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass
class Driving:
    """The run's journal as the holder writes to it (fenced by its lease), and what became of
    the drive, said in the lease's release."""

    journal: Fenced
    outcome: str = "lost"


@contextmanager
def driving(
    journal: Journal, run_id: str, environ: Mapping[str, str], fresh: bool = False
) -> Iterator[Driving]:
    """Hold the run's lease while the caller drives it through `Driving.journal`; LeaseHeld,
    with nothing written, while somebody else holds it (or once it was closed for good).
    `fresh`: a run to be flown, refused (before its lease is taken) if it has events."""
    ttl = lease_seconds(environ)
    leases = Leases(journal, run_id)
    at = journal.version(streams.journal(run_id))
    if fresh and at:
        raise FlightError(f"run {run_id} already has {at} events; resume it instead")
    lease = leases.acquire(run_id, holder(), ttl, at_version=at)
    if lease is None and let_go_for_the_dead(leases, run_id):
        lease = leases.acquire(run_id, holder(), ttl, at_version=at)
    if lease is None:
        raise LeaseHeld(held_by(leases, run_id))
    held = Driving(Fenced(journal, lease.stream, lease.epoch))
    beat = holding.heartbeat(leases, lease, ttl=ttl, writer=held.journal)
    try:
        yield held
    except StaleEpoch as exc:
        raise LeaseTaken(taken(leases, run_id, exc)) from None
    finally:
        [lease] = beat.stop()  # as renewed: its version moved with each renewal
        leases.release(lease, held.outcome)


def let_go_for_the_dead(leases: Leases, run_id: str) -> bool:
    """Release the run's lease for its holder when that is a command line on this host whose
    process is gone (killed mid-run): a crashed flight is resumed at once, not once its lease
    has run out. Only a holder that says it is a command line, on this host, is judged (a
    worker's process is its own host's to judge); the release is written at the stream's
    version, so a holder that renewed meanwhile keeps its lease."""
    current = leases.current(run_id)
    if current is None or not current.holder.endswith(COMMAND_LINE):
        return False
    host, _, pid = current.holder.removesuffix(COMMAND_LINE).rpartition("@")[2].rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or alive(int(pid)):
        return False
    return leases.release(current, "its holder's process was gone")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal sent: only whether the process is there
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # somebody else's process: there
    return True


def held_by(leases: Leases, run_id: str) -> str:
    """Why the lease was not granted: who holds it and until when, or that it was closed."""
    state = standing(leases.last(run_id))
    stream = streams.driver_lease(run_id)
    if state is not None and state.closed:
        return (
            f"run {run_id} is driven by nobody any more: its lease ({stream}) was closed by "
            f"{state.holder} ({state.outcome or 'no reason given'}). Nothing was written"
        )
    if state is None or not state.live(leases.clock()):
        # Taken by another between our look and our grant, and let go again since.
        return (
            f"run {run_id}: another holder took its lease ({stream}) at the same moment. "
            "Nothing was written: try again"
        )
    return (
        f"run {run_id} is being driven by {state.holder}: its lease ({stream}) is held until "
        f"{when(state.expires)} and renewed while it drives. Nothing was written: try again "
        "once it has let the run go (or its lease has run out)"
    )


def taken(leases: Leases, run_id: str, exc: StaleEpoch) -> str:
    state = standing(leases.last(run_id))
    by = f" by {state.holder}" if state is not None and state.holder else ""
    return (
        f"run {run_id}: its lease ({streams.driver_lease(run_id)}) was lost{by} while this "
        f"command drove the run ({exc}): it stopped where it was; what it wrote stands. "
        "Resume it once nobody else drives it"
    )
