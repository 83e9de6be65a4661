"""On a pool of threads (Celery's `-P threads`), one process drives steps of several runs at
once. A step whose lease is lost ends its own children (its git, its sandboxed runs) and starts
none until it is over; another run's step, on another thread of the same process, keeps its
children running and starts new ones. `children.end_all` killed every child of the process:
one run's lost lease killed the other's pytest or merge half-way.

The children are a tool's, run on the tool's own thread (runtime/tools.py `execute`), as a
step's are; and a warm flight's thread starts its children under the step driving it now."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from runtime import children
from runtime.coordination.leases import Lease, Leases
from runtime.events import LeaseGranted
from runtime.flight import FlightOutcome
from runtime.journal import MemoryJournal, append_next
from runtime.session import Session
from runtime.tools import Outcome, Tool, execute, schema
from runtime.warm import WarmFlight
from services.control import heartbeat

TTL = 0.3  # seconds: the test's own short lease


def running_child(command: list[str], pids: list[int]) -> Tool:
    """A tool that runs `command` as one of its holding's children, saying its pid."""

    def run() -> str:
        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(command, start_new_session=True)

        with children.started(" ".join(command), start) as proc:
            pids.append(proc.pid)
            code = proc.wait()
        return f"exited {code}"

    return Tool("run", "runs a command", schema({}), run, timeout=60)


class Step(threading.Thread):
    """A step on a pool's thread: its lease's heartbeat while it runs a long child, then, when
    let go on, a quick one."""

    def __init__(self, leases: Leases, lease: Lease) -> None:
        super().__init__(name=f"step-{lease.resource}")
        self.leases, self.lease = leases, lease
        self.pids: list[int] = []
        self.outcomes: list[Outcome] = []
        self.go_on = threading.Event()

    def run(self) -> None:
        beat = heartbeat(self.leases, self.lease)
        try:
            self.outcomes.append(execute(running_child(["sleep", "60"], self.pids), {}))
            assert self.go_on.wait(30)
            self.outcomes.append(execute(running_child(["true"], self.pids), {}))
        finally:
            beat.stop()


def until(check, what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def take_over(journal: MemoryJournal, lease: Lease) -> None:
    """Another worker is granted the lease (it ran out, as its holder could not see)."""
    grant = LeaseGranted(resource=lease.resource, holder="w2", expires=9e9)
    append_next(journal, lease.stream, [grant])


def test_a_lost_lease_ends_its_steps_children_and_not_another_steps(settings):
    settings.STEP_LEASE_SECONDS = TTL
    journal = MemoryJournal()
    leases = Leases(journal)
    a = Step(leases, leases.acquire("run-a", "w1", TTL))
    b = Step(leases, leases.acquire("run-b", "w1", TTL))
    a.start()
    b.start()
    try:
        until(lambda: a.pids and b.pids, "both steps' children")
        take_over(journal, a.lease)
        until(lambda: a.outcomes, "run a's child to be ended")
        assert a.outcomes[0].error is not None and a.outcomes[0].error.type == "Ended"
        assert not alive(a.pids[0])
        time.sleep(2 * TTL)  # beats of both heartbeats
        assert alive(b.pids[0]) and b.outcomes == []  # run b's child goes on
        assert children.running() == 1
        os.killpg(b.pids[0], signal.SIGTERM)  # it ends as it would (a test run that finished)
        until(lambda: b.outcomes, "run b's child to end")
        b.go_on.set()  # run b starts another child while run a's lost lease is not over
        b.join(30)
        assert [o.error for o in b.outcomes] == [None, None]
        assert [o.result for o in b.outcomes] == ["exited -15", "exited 0"]
        a.go_on.set()  # run a's step, which lost its lease, starts none
        a.join(30)
        assert a.outcomes[1].error is not None and "was not started" in a.outcomes[1].error.message
        assert len(a.pids) == 1
    finally:
        for step in (a, b):
            step.go_on.set()
            for pid in step.pids:
                if alive(pid):
                    os.killpg(pid, signal.SIGKILL)
            step.join(30)
    assert children.running() == 0


def test_a_warm_flights_children_belong_to_the_step_driving_it_now():
    """A warm flight's thread lives across steps, each with a lease (a holding) of its own:
    the children it starts are the current step's, not the first step's."""
    seen: list[object | None] = []

    def fly(session: Session) -> FlightOutcome:
        for _ in range(2):
            seen.append(children.holding())
            assert session.pause is not None
            session.pause()  # parked until the next step
        seen.append(children.holding())
        return FlightOutcome("r-1", "done")

    warm = WarmFlight(Session(MemoryJournal(), "r-1"), fly)
    steps = [object(), object(), object()]
    for n, step in enumerate(steps):
        before = children.enter(step)
        try:
            status = warm.step(None, None).status
        finally:
            children.enter(before)
        assert status == ("done" if n == 2 else "stepped")
    assert seen == steps
    assert children.holding() is None


def test_a_specialist_run_inline_has_its_children_ended_with_the_steps_lease(settings):
    """An eager worker runs a specialist inside the step that sent it, under leases of its own
    and a heartbeat of its own (services/specialists.py): its holding is nested in the step's,
    so the step's lost lease ends the specialist's children too. A holding of its own alone
    left its pytest or git running beside the run's new driver."""
    settings.STEP_LEASE_SECONDS = TTL
    journal = MemoryJournal()
    leases = Leases(journal)
    step_lease = leases.acquire("run-a", "w1", TTL)
    specialist_lease = leases.acquire("run-a-S1", "w1", TTL)
    pids: list[int] = []
    outcomes: list[Outcome] = []

    def specialist() -> None:
        beat = heartbeat(leases, specialist_lease)  # as run_specialist, inside the step
        try:
            outcomes.append(execute(running_child(["sleep", "60"], pids), {}))
        finally:
            beat.stop()

    def step() -> None:
        beat = heartbeat(leases, step_lease)
        try:
            specialist()
        finally:
            beat.stop()

    thread = threading.Thread(target=step, name="step-run-a")
    thread.start()
    try:
        until(lambda: pids, "the specialist's child")
        take_over(journal, step_lease)  # the step's lease, not the specialist's
        until(lambda: outcomes, "the specialist's child to be ended")
        assert outcomes[0].error is not None and outcomes[0].error.type == "Ended"
        assert not alive(pids[0])
    finally:
        for pid in pids:
            if alive(pid):
                os.killpg(pid, signal.SIGKILL)
        thread.join(30)
    assert children.running() == 0
    assert children.holding() is None
