"""A lease whose renewal lands after its expiry is kept (nobody took it), unless the wait cost
its holder something already: at the expiry its children were ended, since another worker may
have taken the work over by then, and the tool whose child it was answered Ended, which the
agent loop would write down as the tool's own failure were the step let go on. Such a step
ends as one whose lease was lost, and the run's next step runs the tool again."""

from __future__ import annotations

import os
import signal
import threading

from runtime import children
from runtime.coordination.leases import Leases
from runtime.events import BudgetDebited
from runtime.fenced import Fenced
from runtime.journal import LeaseLost
from runtime.tools import Outcome, execute
from services.control import heartbeat
from tests.runtime.test_a_renewal_counts_from_its_landing import Clock, Gated
from tests.tasks.test_a_lost_lease_ends_only_its_own_children import alive, running_child, until

TTL = 6.0  # seconds of the test's clock, which moves only when the test moves it


def test_a_late_renewal_does_not_keep_a_step_whose_child_was_ended(settings):
    settings.STEP_LEASE_SECONDS = TTL
    journal = Gated()
    clock = Clock(1000.0)
    leases = Leases(journal, clock=clock)
    journal.gate.set()
    lease = leases.acquire("run-a", "w1", TTL)
    journal.gate.clear()
    journal.waiting.clear()
    writer = Fenced(journal, lease.stream, lease.epoch)
    pids: list[int] = []
    outcomes: list[Outcome] = []
    beats = []

    written: list[object] = []

    def step() -> None:
        beats.append(heartbeat(leases, lease, writer=writer))
        try:
            outcomes.append(execute(running_child(["sleep", "60"], pids), {}))
            # What the agent loop does next: write the tool's outcome down (its ToolReturned).
            event = BudgetDebited(run_id="run-a", amount=1)
            written.append(writer.append("run-run-a", [event], 0))
        except LeaseLost as exc:
            written.append(exc)
        finally:
            beats[0].stop()

    thread = threading.Thread(target=step, name="step-run-a")
    thread.start()
    try:
        until(lambda: pids, "the step's child")
        clock.now = 1004.0  # two thirds of the lease have run: the renewal is due
        assert journal.waiting.wait(10)  # and waits at the gate
        clock.now = 1006.0  # the lease expires before it lands
        until(lambda: outcomes, "the child to be ended at the expiry")
        assert outcomes[0].error is not None and outcomes[0].error.type == "Ended"
        assert not alive(pids[0])
        assert beats[0].overdue == [lease] and beats[0].lost == []
        journal.gate.set()  # the renewal lands: nobody took the lease, but the child is gone
        until(lambda: beats[0].lost, "the late renewal to be answered")
    finally:
        journal.gate.set()
        for pid in pids:
            if alive(pid):
                os.killpg(pid, signal.SIGKILL)
        thread.join(30)
    [gone] = beats[0].lost  # as renewed: its release goes on from the renewal's version
    assert gone.epoch == lease.epoch and gone.version == 2 and beats[0].kept == 0
    assert journal.read("lease-run-a")[-1].event.kind == "LeaseRenewed"  # it did land
    assert len(written) == 1 and isinstance(written[0], LeaseLost)  # the Ended not written
    assert journal.version("run-run-a") == 0
    assert children.running() == 0
