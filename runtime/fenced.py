"""A writer's journal fenced by its lease: `Fenced` wraps any Journal so that every append of one
writer carries its fence (runtime/journal.py says how the append checks one), and
`check_standing` asks the same before a side effect outside the journal.

A heartbeat that finds its lease overdue holds the writer's writes (`hold`) until the renewal
answers (`resume`), or gives them up (`give_up`): runtime/coordination/heartbeat.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from runtime.events import Event
from runtime.journal import (
    Batch,
    BatchJournal,
    ClaimsJournal,
    Fence,
    Guard,
    Journal,
    LeaseLost,
    Recorded,
    ScanningJournal,
    SeekingJournal,
    Stamp,
    check_fence,
    last_of_kind,
    last_record,
    read_at_versions,
    read_between,
    read_of_kind,
    read_run_of_kind,
)


class Fenced:
    """A Journal whose every append carries one lease's fence: a writer whose lease was taken
    over cannot write, to whichever stream it writes, and (`check`) runs nothing that would
    change the world outside it. Reads pass through."""

    def __init__(self, journal: Journal, lease: str, epoch: int) -> None:
        self.journal = journal
        self.fence: Fence = (lease, epoch)
        # The fence whose lease the holder gave up (`give_up`); a warm flight's next step moves
        # `fence` on to its own lease, and writes again.
        self.given_up: Fence | None = None
        # The fence whose lease is overdue (`hold`): writes under it wait, until `resume` or
        # `give_up` (or `held_until`, time.monotonic(), passes: then given up).
        self.held: Fence | None = None
        self.held_until = 0.0
        self._standing = threading.Condition()

    def give_up(self, fence: Fence | None = None) -> None:
        """Write nothing more under this fence (`fence`: that one, which a warm flight's writer
        may have moved on from since), nor run anything `check` guards (LeaseLost): the
        holder's heartbeat took its lease for lost. A lease that ran out unrenewed still
        stands at its epoch until somebody takes it, so the journal's fence alone let the
        writer go on (asking the model, dispatching tools whose runs were refused) until its
        step's turns were used up. Wakes the writes `hold` keeps waiting."""
        with self._standing:
            self.given_up = self.fence if fence is None else fence
            self._standing.notify_all()

    def hold(self, seconds: float, fence: Fence | None = None) -> None:
        """Writes under this fence (`fence`: that one), and what `check` guards, wait: the
        holder's lease expired while its renewal had not answered, and nobody can tell yet
        whether somebody else took it. `resume` lets them go on (the renewal landed at the
        epoch: nobody did), `give_up` refuses them; past `seconds` they are given up."""
        with self._standing:
            self.held = self.fence if fence is None else fence
            self.held_until = time.monotonic() + seconds

    def resume(self, fence: Fence | None = None) -> None:
        """Writes held by `hold` go on."""
        with self._standing:
            if self.held == (self.fence if fence is None else fence):
                self.held = None
            self._standing.notify_all()

    def refuse_if_given_up(self) -> None:
        with self._standing:
            while self.held is not None and self.held == self.fence != self.given_up:
                left = self.held_until - time.monotonic()
                if left <= 0:
                    self.given_up = self.held  # nobody said within the bound: taken for lost
                    break
                self._standing.wait(left)
        if self.given_up is not None and self.given_up == self.fence:
            raise LeaseLost(*self.fence)

    def append(
        self,
        stream: str,
        events: Sequence[Event],
        expected_version: int,
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
        stamp: Stamp | None = None,
    ) -> list[Recorded]:
        self.same_fence(fence)
        self.refuse_if_given_up()
        return self.journal.append(
            stream, events, expected_version, fence=self.fence, guards=guards, stamp=stamp
        )

    def append_batches(
        self,
        batches: Sequence[Batch],
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
    ) -> list[Recorded]:
        self.same_fence(fence)
        self.refuse_if_given_up()
        if not isinstance(self.journal, BatchJournal):
            raise TypeError(f"{type(self.journal).__name__} cannot append several streams at once")
        return self.journal.append_batches(batches, fence=self.fence, guards=guards)

    def same_fence(self, fence: Fence | None) -> None:
        if fence is not None and fence != self.fence:
            raise ValueError(f"this journal is fenced by {self.fence}, not {fence}")

    def check(self) -> None:
        """Raise StaleEpoch unless this writer's lease still stands at its epoch: what every
        append checks, asked before a side effect no append fences (see `check_standing`);
        LeaseLost, reading nothing, once its holder gave the lease up."""
        self.refuse_if_given_up()
        check_fence(self.fence, last_record(self.journal, self.fence[0]))

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        return self.journal.read(stream, after)

    def read_range(self, stream: str, after: int, until: int) -> list[Recorded]:
        return read_between(self.journal, stream, after, until)

    def last(self, stream: str) -> Recorded | None:
        # The journal's one-row read where it has one: last_record on this wrapper would
        # otherwise ask for the version, then the record at it.
        return last_record(self.journal, stream)

    def read_kind(
        self, stream: str, kind: str, after: int = 0, limit: int | None = None
    ) -> list[Recorded]:
        return read_of_kind(self.journal, stream, kind, after, limit)

    def of_kind(self, run_id: str, stream: str, kind: str) -> list[Recorded]:
        return read_run_of_kind(self.journal, run_id, stream, kind)

    def last_kind(self, stream: str, kind: str) -> Recorded | None:
        return last_of_kind(self.journal, stream, kind)

    def at_versions(self, stream: str, versions: Sequence[int]) -> list[Recorded]:
        return read_at_versions(self.journal, stream, versions)

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        return self.journal.read_all(after, limit)

    def version(self, stream: str) -> int:
        return self.journal.version(stream)

    def read_prefix(self, prefix: str) -> list[Recorded]:
        if not isinstance(self.journal, ScanningJournal):
            raise TypeError(f"{type(self.journal).__name__} cannot read streams by prefix")
        return self.journal.read_prefix(prefix)


def unfenced(journal: Journal) -> Journal:
    """The journal a fenced writer reads through (`journal` itself where it is none): what a
    read that asks for a journal's own index by type (ClaimsJournal, OwnedJournal,
    RunIndexedJournal) asks. A read needs no fence, and `Fenced` forwards none of those reads:
    asked of the wrapper, the workers' sessions and specialists (fenced writers) were read
    past the index, run by run or the whole journal."""
    while isinstance(journal, Fenced):
        journal = journal.journal
    return journal


def claims_index(journal: Journal) -> ClaimsJournal | None:
    """What finds claims by their ids for `journal`: itself where it does, or the journal a
    fenced writer reads through (`unfenced`); None where neither does."""
    journal = unfenced(journal)
    return journal if isinstance(journal, ClaimsJournal) else None


def check_standing(journal: Journal) -> None:
    """Before a side effect outside the journal (a tool run, a commit, a merge): raise
    StaleEpoch, as the append would, when `journal` is a fenced writer's whose lease was
    taken over. The append's own fence comes too late for these: a tool runs between its
    ToolDispatched and its ToolReturned, so a writer paused in between (SIGSTOP, a swap storm)
    past its lease, and woken once another driver took over, ran its tool again in the
    workspace the other one drives before its ToolReturned was refused. Unfenced (the command
    line's JSONL file, a replay) there is no lease: nothing is read.

    It costs one read of the lease stream's last event (one row, however long the run).

    What is left is the window between this read and the side effect's last write: a writer
    paused there, or inside the tool (its sandboxed subprocesses pause and wake with it), for
    longer than its lease still changes the workspace after a takeover. A check of a file in
    the workspace naming the last driver's epoch would not close it either, only move the read
    (the same check, then act, on a local file instead of a row); closing it needs the store
    to refuse a stale write, which a plain directory cannot. The heartbeat keeps the lease
    while the writer runs, so it takes a pause of the whole process (its heartbeat with it),
    or a heartbeat that cannot reach the journal, for longer than a lease to open the window."""
    if isinstance(journal, Fenced):
        journal.check()


if TYPE_CHECKING:  # the reads that ask for SeekingJournal by type find a fenced writer's here
    seeking_journal: type[SeekingJournal] = Fenced
