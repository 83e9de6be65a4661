"""Holding leases while work goes on: their heartbeat, and what becomes of the holder's writer
and children when a lease is overdue or lost (runtime/coordination/heartbeat.py renews; this
says what the holder does about it)."""

from __future__ import annotations

from collections.abc import Callable

from runtime import children
from runtime.coordination.heartbeat import Heartbeat, HeartbeatTiming
from runtime.coordination.leases import Lease, Leases
from runtime.fenced import Fenced


def heartbeat(
    leases: Leases,
    *held: Lease,
    ttl: float,
    writer: Fenced | None = None,
    transient: tuple[type[BaseException], ...] = (),
    on_exit: Callable[[], object] | None = None,
) -> Heartbeat:
    """Renew these leases whenever a third of `ttl` has run, from a thread of this process until
    `stop()`: a step (or a specialist) that takes ten minutes keeps them, and a holder that
    dies stops renewing, so its leases run out within `ttl`. A lease found taken over, or run
    out while the journal would not take (or answer) its renewal, gives up the holder's
    `writer` (it writes nothing more, and runs no tool, model call or git that
    `check_standing` guards: the step stops where it is), and ends the children its holder
    has going, its tool runs (their pytest, in the sandbox) and its git, and none of its own
    starts again until this heartbeat is stopped: another worker may now drive the run, and
    replays what this one was doing.

    A lease whose expiry passes while its renewal has not answered (the database slow to take
    or to commit it) is overdue first: the writer waits, the children are ended, and a renewal
    that lands after all (so nobody took the lease) lets the step go on where it waited, as
    long as no child of its was ended or refused meanwhile. One that is refused, fails, or
    does not answer within another `ttl` loses the lease as above.

    Its holder's children are those started, until `stop()`, from the thread that calls this
    and from the threads its work starts (runtime/children.py). Another step on a thread of
    the same process (a pool of threads) holds a lease of its own and keeps its children. Call
    `stop()` on the same thread.

    `transient`: the journal's errors that a renewal tries again soon (the database busy for
    a moment); `on_exit` runs on the renewing thread as it ends (its database connection).
    The workers' steps hold their run's lease so (services/control.py), and so does the
    command line's flight (runtime/cli_lease.py): one way to hold a run's lease."""
    # What a lost lease of these closes, until the holder stops the beat: nested in the holding
    # current here (a step's, where an eager worker runs a specialist inline), whose lost lease
    # ends this one's children too.
    holding = children.nested()
    # What the thread held before (a step's, where an eager worker runs a specialist inline),
    # put back at stop().
    before = children.enter(holding)
    # The fence the writer writes under now: a warm flight's writer moves on to the next step's.
    fence = writer.fence if writer is not None else None

    overdue: set[str] = set()  # the leases past their expiry whose renewal has not answered

    def lost(lease: Lease) -> None:
        # The writer first: a tool whose run is killed next answers with children.Ended,
        # which the agent loop would take for the tool's own failure and write down.
        if writer is not None:
            writer.give_up(fence)
        children.end(holding)

    def late(lease: Lease) -> None:
        # Until the renewal answers, nobody can tell whether another worker took the lease:
        # the writer waits where it is (a model's answer is written once it is known), and
        # the children are ended as for a lost lease, since they would change the workspace
        # meanwhile. The writer's own bound backs the heartbeat's (its grace, then lost).
        overdue.add(lease.resource)
        if writer is not None:
            writer.hold(2 * ttl, fence)
        children.end(holding)

    def kept(lease: Lease) -> bool:
        # The renewal landed at the epoch: nobody took the lease. The holder goes on unless a
        # child was ended or refused meanwhile: its caller was told Ended, and would write
        # that down as the tool's own failure.
        overdue.discard(lease.resource)
        if overdue:
            return True  # another lease is still overdue: the holder waits on for it
        if children.reopen(holding):
            return False
        if writer is not None:
            writer.resume(fence)
        return True

    def ended() -> None:
        children.reopen(holding)
        if on_exit is not None:
            on_exit()

    beat = Heartbeat(
        leases,
        held,
        HeartbeatTiming(ttl),
        transient=transient,
        on_exit=ended,
        on_lost=lost,
        on_overdue=late,
        on_kept=kept,
        on_stop=lambda: children.enter(before),
    )
    return beat.start()
