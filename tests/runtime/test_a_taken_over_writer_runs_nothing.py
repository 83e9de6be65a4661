"""A writer whose lease was taken over changes nothing, the workspace included: a driver paused
between its ToolDispatched and the tool's run (a SIGSTOPped worker) past its lease, and woken
once another driver took the lease over, stops before running the tool, as its next append
would have stopped it. The new driver runs the call once; the journal describes the workspace.

Two sessions on one journal, each fenced by its own grant of the run's lease; the takeover
happens at the crash-test seam that fires once the first one's ToolDispatched is durable."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime import loop
from runtime.budget import Budget
from runtime.coordination.leases import Lease, Leases
from runtime.events import BudgetDebited, WorkspacePrepared
from runtime.faults import Faults
from runtime.fenced import Fenced
from runtime.journal import LeaseLost, MemoryJournal, StaleEpoch
from runtime.model import ScriptedClient, call
from runtime.session import Session
from runtime.tools import Tool, Toolbox, schema

RUN = "r-1"


class TakenOverAt(Faults):
    """The seam: once the stream's `ordinal`th `kind` is durable, another driver is granted
    the lease (the paused holder's ran out: it was granted for no time at all)."""

    def __init__(self, leases: Leases, kind: str, ordinal: int) -> None:
        super().__init__()
        self.leases, self.kind, self.ordinal = leases, kind, ordinal
        self.taken: Lease | None = None

    @property
    def armed(self) -> bool:
        return True

    def appended(self, kind: str, agent: str | None, ordinal: int, agent_ordinal: int) -> None:
        if (kind, ordinal) == (self.kind, self.ordinal):
            self.taken = self.leases.acquire(RUN, "s2", ttl=60)
            assert self.taken is not None


def guard(path: Path) -> Tool:
    """An edit that is not idempotent: run twice, the guard is in the file twice."""

    def edit() -> str:
        with path.open("a") as f:
            f.write("if not text: raise ValueError\n")
        return "edited"

    return Tool("edit_file", "Insert the guard.", schema({}), edit)


def coder(path: Path) -> loop.Agent:
    script = [call("edit_file", 10), call("done", 5, summary="guarded")]
    return loop.Agent("coder", ScriptedClient(script, "coder"), Toolbox([guard(path)]), "sys")


def test_a_driver_whose_lease_was_taken_over_before_its_tool_ran_does_not_run_it(tmp_path):
    parser = tmp_path / "parser.py"
    journal = MemoryJournal()
    leases = Leases(journal, RUN)
    first = leases.acquire(RUN, "s1", ttl=0)  # ran out at once: nobody renews a paused holder's
    assert first is not None
    seam = TakenOverAt(leases, "ToolDispatched", 1)
    stale = Session(Fenced(journal, *first.fence), RUN, faults=seam)
    with pytest.raises(StaleEpoch):
        loop.run(coder(parser), "task", stale, Budget(10_000), task_id="T1")
    assert not parser.exists()  # the stale driver did not touch the workspace
    kinds = [r.event.kind for r in journal.read(f"run-{RUN}")]
    assert kinds[-1] == "ToolDispatched"  # and wrote nothing after its dispatch

    assert seam.taken is not None
    driver = Session(Fenced(journal, *seam.taken.fence), RUN)
    result = loop.run(coder(parser), "task", driver, Budget(10_000), task_id="T1")
    assert result.status == "done"
    assert parser.read_text().count("raise ValueError") == 1  # run once, by the new driver
    events = [r.event for r in journal.read(f"run-{RUN}")]
    assert [e.kind for e in events].count("ToolDispatched") == 1
    [returned] = [e for e in events if e.kind == "ToolReturned"]
    assert returned.result == "edited"

    # The journal is what happened: replayed, it is the same, and nothing runs.
    replay = Session(MemoryJournal(), RUN, recorded=events, replay=True)
    loop.run(coder(tmp_path / "untouched.py"), "task", replay, Budget(10_000), task_id="T1")
    assert not (tmp_path / "untouched.py").exists()


def test_a_driver_whose_lease_was_taken_over_runs_no_activity(tmp_path):
    journal = MemoryJournal()
    leases = Leases(journal, RUN)
    first = leases.acquire(RUN, "s1", ttl=0)
    assert first is not None
    session = Session(Fenced(journal, *first.fence), RUN)
    assert leases.acquire(RUN, "s2", ttl=60) is not None
    prepared: list[str] = []

    def prepare() -> dict[str, str]:
        prepared.append("git init")
        return {"path": "w", "template": "t", "commit": "c0"}

    with pytest.raises(StaleEpoch):
        session.activity(WorkspacePrepared, prepare)
    assert prepared == []  # no workspace prepared (nor committed, nor merged) by a stale driver


class LeaseReadsOne(MemoryJournal):
    """Refuses a whole read of a lease stream: a check per tool call must cost the same at the
    run's 20,000th call as at its first."""

    def read(self, stream: str, after: int = 0) -> list:
        assert not stream.startswith("lease-") or after >= self.version(stream) - 1, stream
        return super().read(stream, after)


def test_the_check_reads_only_the_lease_streams_last_event(tmp_path):
    journal = LeaseReadsOne()
    leases = Leases(journal, RUN)
    lease = leases.acquire(RUN, "s1", ttl=60)
    assert lease is not None
    for _ in range(5):  # a lease stream of some length: renewals
        lease = leases.renew(lease, 60)
    session = Session(Fenced(journal, *lease.fence), RUN)
    result = loop.run(coder(tmp_path / "p.py"), "task", session, Budget(10_000), task_id="T1")
    assert result.status == "done"
    assert (tmp_path / "p.py").read_text().count("raise ValueError") == 1


class Counted(ScriptedClient):
    """A scripted model that counts the calls made of it: each is one paid for."""

    asked = 0

    def complete(self, messages, tools):
        self.asked += 1
        return super().complete(messages, tools)


def test_a_driver_whose_lease_was_taken_over_does_not_ask_the_model(tmp_path):
    """Taken over once its first tool's result is durable: the stale driver's next step is a
    model call, which was made (and paid for) before its append was refused."""
    journal = MemoryJournal()
    leases = Leases(journal, RUN)
    first = leases.acquire(RUN, "s1", ttl=0)
    assert first is not None
    seam = TakenOverAt(leases, "ToolReturned", 1)
    model = Counted([call("edit_file", 10), call("done", 5, summary="guarded")], "coder")
    agent = loop.Agent("coder", model, Toolbox([guard(tmp_path / "p.py")]), "sys")
    stale = Session(Fenced(journal, *first.fence), RUN, faults=seam)
    with pytest.raises(StaleEpoch):
        loop.run(agent, "task", stale, Budget(10_000), task_id="T1")
    assert model.asked == 1  # the first turn's call; not the second's
    kinds = [r.event.kind for r in journal.read(f"run-{RUN}")]
    assert kinds[-2:] == ["ToolReturned", "ModelCalled"]  # durable with the result: no answer

    assert seam.taken is not None
    again = Counted([call("edit_file", 10), call("done", 5, summary="guarded")], "coder")
    agent = loop.Agent("coder", again, Toolbox([guard(tmp_path / "p.py")]), "sys")
    driver = Session(Fenced(journal, *seam.taken.fence), RUN)
    assert loop.run(agent, "task", driver, Budget(10_000), task_id="T1").status == "done"
    assert again.asked == 1  # the new driver asks the call nobody answered; the first is recorded


def test_a_writer_given_up_writes_nothing_until_its_fence_moves_to_a_new_lease():
    """Its holder's heartbeat took the lease for lost (run out unrenewed): nobody took it, so
    the journal's fence would let it write, but it is refused, as a writer taken over is. A
    warm flight's next step moves the writer onto that step's own lease, and writes again."""
    journal = MemoryJournal()
    leases = Leases(journal, RUN)
    lease = leases.acquire(RUN, "w1", ttl=60)
    writer = Fenced(journal, lease.stream, lease.epoch)
    writer.give_up()
    with pytest.raises(LeaseLost):
        writer.append(f"run-{RUN}", [BudgetDebited(amount=1)], 0)
    with pytest.raises(LeaseLost):
        writer.check()
    assert journal.version(f"run-{RUN}") == 0
    leases.release(lease)
    writer.fence = leases.acquire(RUN, "w1", ttl=60).fence  # the next step's lease
    writer.check()
    writer.append(f"run-{RUN}", [BudgetDebited(amount=1)], 0)
    assert journal.version(f"run-{RUN}") == 1
