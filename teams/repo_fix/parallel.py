"""Parallel writers: each fix to its own coder, in its own git worktree, held as a commitment.

With `parallel_writers`, the orchestrator splits the task into independent fixes, each naming
the files it writes, and the harness has them written at the same time (seed 02 §§4, 15, 21):

    award       fix n goes to WRITERS[n] (coder-a, coder-b): the gate's authority for its merge
    commitment  the writer takes the lease on the fix (`<run>:fix:<task>`) and the harness
                makes the commitment `c-<task>` under it: "merge a reviewed fix for <task> into
                main, or say why not"
    files       then the leases on the fix's files, a file each in turn. A file another writer
                holds is waited for (LeaseAwaited); a wait that would close a cycle of the
                wait-for graph is refused (DeadlockDetected: the youngest wait in the cycle):
                the refused writer gives its files back and starts once the others are merged,
                and so does a writer still waiting when nobody can move
    draft       each writer acknowledges its commitment when it starts and works in a worktree
                of its own (WorktreeAdded: `<workspace>.<writer>-<task>`, branch
                `writer/<writer>-<task>`, from main as it stands), never seeing the other's
                files, and writes there (its test runs too) only the files it leased and
                tests/; what it wrote is committed there as the task's candidate
    lost lease  a writer asked twice without a report (each miss a DeadlinePassed) has let its
                lease lapse: the harness revokes it, the other writer takes it over, and
                `reclaim` moves the commitment with the lease (CommitmentTransferred); the new
                owner acknowledges it and does the fix in a worktree of its own, and the silent
                writer's is taken away (WorktreeRemoved, naming what it left uncommitted)
    merge       one after the other, in the plan's order: each candidate reviewed (the usual
                reject/redo rounds), merged into main through the mutation gate, fenced by the
                writer's lease on the fix (a writer that lost it is refused), and then the
                commitment is released (`fulfilled`) and the writer's leases given back; a
                merge that conflicts with main (both changed a file under tests/, say) is
                aborted and the candidate goes back to its coder. Merged, the writer's
                worktree is taken away (its branch stays); so is every one still given out
                when the run stops. They were kept: a worker made two for every such run, and
                a long-lived one kept them all, checked-out trees and git's entries for them

Everything outside the run is recorded in it and read back on resume and replay, never done
again: the worktrees and candidates are activities, the leases taken and given back LeaseTaken
and LeaseGivenBack (the lease's own stream has the grant and the release), the waits and the
transfers decisions the primitives record.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from runtime import streams, workspace
from runtime.coordination.commitments import Commitments
from runtime.coordination.leases import Lease, Leases
from runtime.coordination.waits import WaitForGraph
from runtime.coordination.writers import given
from runtime.events import (
    CandidateCommitted,
    DeadlockDetected,
    Integrated,
    LeaseGivenBack,
    LeaseTaken,
    WorktreeRemoved,
)
from teams.repo_fix.harness import REPLY_ATTEMPTS, Harness, NoReply, Stop
from teams.repo_fix.rounds import fix_rounds

WRITERS = ("coder-a", "coder-b")
# A writer's lease is lost by revocation when it misses its deadline (decided from the journal),
# never by the wall clock running out under a slow test run.
TTL = 6 * 3600.0


@dataclass
class Share:
    """One fix in one writer's hands: its lease on the fix, the files it holds, its draft."""

    fix: dict[str, Any]
    writer: str
    lease: Lease
    held: list[Lease] = field(default_factory=list)
    drafted: tuple[CandidateCommitted, dict[str, Any] | None] | None = None

    @property
    def task(self) -> str:
        return str(self.fix["id"])

    @property
    def commitment(self) -> str:
        return f"c-{self.task}"

    @property
    def files(self) -> list[str]:
        return [str(f) for f in self.fix.get("files", [])]

    @property
    def worktree(self) -> str:
        return f"{self.writer}-{self.task}"


def leased(files: list[str]) -> workspace.Writable:
    """What a writer holding the leases on `files` may write: those files, and tests/."""
    held = {posixpath.normpath(f) for f in files}
    return lambda path: path in held or path.startswith("tests/")


class Parallel:
    """The parallel writers of one flight, over its harness."""

    def __init__(self, harness: Harness) -> None:
        self.h = harness
        session = harness.session
        self.leases = Leases(session.journal, session.run_id)
        self.commitments = Commitments(session, self.leases)
        self.graph = WaitForGraph(session, self.leases)
        self.lost: set[str] = set()  # writers that let their lease lapse
        self.given: dict[str, tuple[str, str]] = {}  # worktrees given out: name -> writer, task

    def resource(self, *what: str) -> str:
        # The run's own (a fork's replay takes its parent's as its own: runtime/fork.py
        # renames them when it copies the prefix)
        return streams.resource(self.h.session.run_id, *what)

    # --- leases, as the run records them ----------------------------------------------------
    #
    # The lease store is outside the run: what the harness took and gave back is journalled in
    # the run too (LeaseTaken, LeaseGivenBack), and read back, never done again, on resume and
    # replay; a take the record does not hold here did not succeed here.

    def take(self, resource: str, holder: str, task: str) -> Lease | None:
        s = self.h.session
        if not s.live:
            recorded = s.peek()
            if not (
                isinstance(recorded, LeaseTaken)
                and (recorded.resource, recorded.holder) == (resource, holder)
            ):
                return None
            s.emit(recorded)
            taken = recorded
        else:
            lease = self.leases.acquire(resource, holder, TTL)
            if lease is None:
                return None
            taken = s.new(
                LeaseTaken,
                agent=holder,
                task_id=task,
                resource=resource,
                holder=holder,
                epoch=lease.epoch,
                expires=lease.expires,
                stream_version=lease.version,
            )
            s.emit(taken)
        return Lease(resource, holder, taken.epoch, taken.expires, taken.stream_version)

    def give(self, lease: Lease, outcome: str, task: str, counted: bool = True) -> None:
        s = self.h.session
        if s.live:
            self.leases.release(lease, outcome, counted=counted)
        s.emit(
            s.new(
                LeaseGivenBack,
                agent=lease.holder,
                task_id=task,
                resource=lease.resource,
                holder=lease.holder,
                epoch=lease.epoch,
                outcome=outcome,
            )
        )

    # --- award, commitment, files ----------------------------------------------------------

    def award(self, fix: dict[str, Any], writer: str) -> Share:
        task = str(fix["id"])
        lease = self.take(self.resource("fix", task), writer, task)
        if lease is None:
            raise Stop("inconclusive", f"{writer} could not take the lease on {task}")
        share = Share(fix, writer, lease)
        self.commitments.make(
            share.commitment,
            writer,
            f"merge a reviewed fix for {task} into main, or say why not",
            task_id=task,
            lease=lease,
        )
        self.held_by(share)
        return share

    def held_by(self, share: Share) -> None:
        """The merge's authority and fence follow the fix's current holder."""
        self.h.awarded[share.task] = share.writer
        self.h.fences[share.task] = share.lease.fence

    def take_files(self, shares: list[Share]) -> list[Share]:
        """Each share's files, a file per writer in turn; the shares that must wait for the
        others' merges (refused by the wait-for graph, or waiting when nobody can move)."""
        pending = {s.task: list(s.files) for s in shares}
        waiting: set[str] = set()
        later: list[Share] = []
        moved = True
        while moved:
            moved = False
            for share in shares:
                if share in later or not pending[share.task]:
                    continue
                resource = self.resource("file", pending[share.task][0])
                got = self.take(resource, share.writer, share.task)
                if got is not None:
                    share.held.append(got)
                    pending[share.task].pop(0)
                    waiting.discard(share.task)
                    moved = True
                    continue
                if share.task in waiting:
                    continue
                waiting.add(share.task)
                answer = self.graph.await_lease(share.writer, resource, task_id=share.task)
                if isinstance(answer, DeadlockDetected):
                    # Its other way: give its files back, and start after the others merged.
                    self.give_back(share, f"refused a wait that closed a cycle ({answer.rule})")
                    later.append(share)
                    moved = True
        return later + [s for s in shares if pending[s.task] and s not in later]

    def give_back(self, share: Share, outcome: str, counted: bool = True) -> None:
        for lease in share.held:
            self.give(lease, outcome, share.task, counted)
        share.held = []

    # --- draft, lost lease, merge ---------------------------------------------------------

    def draft_all(self, shares: list[Share]) -> None:
        """Every share's first draft, each writer in its own worktree; a writer that does not
        answer loses its lease and the fix (and its commitment) goes to the other."""
        queue = list(shares)
        while queue:
            share = queue.pop(0)
            try:
                self.draft(share)
            except NoReply as silent:
                self.take_over(share, silent.reason)
                queue.append(share)

    def draft(self, share: Share) -> None:
        h = self.h
        if not self.commitments.ledger()[share.commitment].acknowledged:
            self.commitments.acknowledge(share.commitment, share.writer)
        self.work_in(share)
        given(h.session, h.path, share.worktree, agent=share.writer, task_id=share.task)
        self.given[share.worktree] = (share.writer, share.task)
        request, reply = h.request(share.writer, share.task, {"brief": share.fix["brief"]})
        share.drafted = h.submit(share.task, share.writer, request, reply, "round 1")

    def work_in(self, share: Share) -> None:
        """The writer's tools and the task's commits go to the share's worktree, and what it
        writes there, by its file tools or its test runs, to the files it leased and tests/:
        a change to another writer's file would only meet that writer's at the merge."""
        self.h.where[share.writer] = workspace.worktree_path(self.h.path, share.worktree)
        self.h.worktrees[share.task] = share.worktree
        self.h.confined.pop(share.writer, None)
        if share.files:  # a fix naming no files leases none, and confines nothing
            self.h.confined[share.writer] = leased(share.files)

    def take_over(self, share: Share, why: str) -> None:
        """The silent writer's lease on the fix is revoked and the other writer takes it; the
        commitment moves with it (reclaim). With nobody left to take it, a person decides."""
        h, silent = self.h, share.writer
        self.lost.add(silent)
        heirs = [w for w in WRITERS if w not in self.lost]
        if not heirs:
            h.escalate(
                share.task,
                "no_reply",
                REPLY_ATTEMPTS,
                why,
                f"{silent} did not reply to {REPLY_ATTEMPTS} requests on {share.task}, and no "
                "writer is left to take the fix over",
            )
            return
        revoked = f"revoked: {silent} let its reply deadline pass twice on {share.task}"
        self.give(share.lease, revoked, share.task, counted=False)
        self.give_back(share, revoked, counted=False)
        self.take_away(share.worktree)  # never merged: what it holds goes, named
        heir = heirs[0]
        lease = self.take(share.lease.resource, heir, share.task)
        if lease is None:
            raise Stop("escalated", f"{heir} could not take the lease on {share.task} over")
        self.commitments.reclaim(share.lease.resource)
        share.writer, share.lease = heir, lease
        self.held_by(share)
        if self.take_files([share]):
            raise Stop("escalated", f"{heir} could not take {share.task}'s files over")

    def land(self, share: Share) -> Integrated:
        """Review and merge the share's draft through the gate; then its commitment is kept
        and its leases given back."""
        self.work_in(share)
        integrated = fix_rounds(self.h, share.fix, share.writer, share.drafted)
        self.commitments.release(
            share.commitment,
            share.writer,
            "fulfilled",
            f"merged into main as {integrated.commit[:12]}",
        )
        self.give_back(share, f"merged {share.task}")
        self.give(share.lease, f"merged {share.task}", share.task)
        self.take_away(share.worktree)
        return integrated

    def take_away(self, name: str) -> None:
        """The worktree `name` given out is taken away (WorktreeRemoved: done once, read back on
        resume and replay) with git's entry for it; its branch, and so its commits, stay."""
        h = self.h
        if name not in self.given:
            return
        writer, task = self.given.pop(name)
        s = h.session
        if not s.live and not isinstance(s.peek(), WorktreeRemoved):
            return  # a journal from before the writers' worktrees were taken away
        s.activity(
            WorktreeRemoved,
            lambda: workspace.discard_checkout(h.path, name),
            agent=writer,
            task_id=task,
        )
        if h.where.get(writer) == workspace.worktree_path(h.path, name):
            h.where.pop(writer)  # back to the workspace, where it works when not a writer

    def take_all_away(self) -> None:
        for name in list(self.given):
            self.take_away(name)


def write(harness: Harness, tasks: list[dict[str, Any]]) -> list[Integrated]:
    """The plan's fixes, written in parallel and merged one after the other."""
    fixes = [t for t in tasks if t["kind"] == "fix"]
    if len(fixes) > len(WRITERS):
        raise Stop(
            "inconclusive",
            f"the plan has {len(fixes)} fixes; {len(WRITERS)} writers take one each",
        )
    writers = Parallel(harness)
    try:
        return written(writers, fixes)
    except Stop:
        # The run ends here: nothing of a worktree still given out will be merged. (A crash is
        # no end: the resumed run goes on in them.)
        writers.take_all_away()
        raise


def written(writers: Parallel, fixes: list[dict[str, Any]]) -> list[Integrated]:
    shares = [writers.award(fix, writer) for fix, writer in zip(fixes, WRITERS, strict=False)]
    later = writers.take_files(shares)
    now = [s for s in shares if s not in later]
    writers.draft_all(now)
    shipped = [writers.land(s) for s in now]
    for share in later:  # their files are free now: the others gave them back
        if writers.take_files([share]):
            raise Stop("escalated", f"{share.writer} still cannot take {share.task}'s files")
        writers.draft_all([share])
        shipped.append(writers.land(share))
    return shipped
