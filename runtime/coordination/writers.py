"""Parallel writers: a git worktree each, and their work into main only through the gate.

Seed 02 §15: agents working at the same time share immutable evidence (the repository's
history), never a mutable checkout. `Writers.add` gives a writer its own worktree on its own
branch from main (runtime/workspace.py); `Writers.merge` merges that branch into main as an
effect of the ledger behind the mutation gate: the intent version, the lease epoch, the writer's
authority, the evidence (a reviewer's approval, found by the caller in the record) and the
merge's derived key are checked before git is touched, and a merge done once is not done again.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from runtime import merges, workspace
from runtime.coordination.effects import Ledger
from runtime.coordination.keys import effect_key
from runtime.coordination.mutation import Mutation, MutationGate
from runtime.events import WorktreeAdded
from runtime.journal import append_next
from runtime.session import Session


def given(session: Session, root: Path, writer: str, **envelope: Any) -> WorktreeAdded:
    """`writer`'s own worktree of the workspace at `root`, given out as a step of the run
    itself (a team's harness): made once, and read back from the record on resume and replay,
    which touch no git. `Writers.add` journals it beside the run instead, for callers with no
    session."""
    return session.activity(WorktreeAdded, lambda: workspace.add_worktree(root, writer), **envelope)


class Writers:
    """The parallel writers of one workspace (`root`, a git repository with a main branch)."""

    def __init__(self, root: Path, gate: MutationGate, run_id: str = "") -> None:
        self.root = Path(root)
        self.gate = gate
        self.ledger = Ledger(gate.journal, gate=gate)
        self.run_id = run_id

    @property
    def stream(self) -> str:
        """Where the worktrees given out are journalled (the run's timeline shows them)."""
        return f"writers-{self.run_id}"

    def add(self, writer: str) -> WorktreeAdded:
        """The writer's own worktree (the same one again if it has one), journalled once."""
        made = workspace.add_worktree(self.root, writer)
        given = [
            r.event
            for r in self.gate.journal.read(self.stream)
            if isinstance(r.event, WorktreeAdded) and r.event.writer == writer
        ]
        if given:
            return given[0]
        added = WorktreeAdded(run_id=self.run_id, agent=writer, **made)
        append_next(self.gate.journal, self.stream, [added])
        return added

    def path(self, writer: str) -> Path:
        return workspace.worktree_path(self.root, writer)

    def commit(self, writer: str, message: str) -> dict[str, Any]:
        return workspace.commit_worktree(self.root, writer, message)

    def key(self, writer: str) -> str:
        """One merge per writer and run: its idempotency key, derived, never given."""
        return effect_key(self.run_id, f"merge:{writer}", "main", None)

    def merge(self, writer: str, mutation: Mutation) -> str:
        """Merge the writer's branch into main through the gate; main's commit after it.
        Refused (GateRefused), nothing is merged and no ref moves; a conflict with main
        (MergeConflict) is aborted, main as it was."""
        branch = workspace.writer_branch(writer)
        commit = workspace.git(self.root, "rev-parse", branch)
        key = self.key(writer)
        result = self.ledger.perform(
            key,
            "merge",
            "main",
            {"branch": branch, "commit": commit},
            # the commit the request names, not whatever the branch holds by then
            lambda _: merges.merge(self.root, branch, f"merge {writer}", commit),
            run_id=self.run_id,
            mutation=replace(mutation, expected_key=key),
        )
        return str(result)
