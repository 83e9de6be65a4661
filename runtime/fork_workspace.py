"""A fork's workspace: the parent's repository as it stood at the fork point (runtime/fork.py
plans the fork; this makes its git). Staged beside the fork's directory and moved into it only
once the fork's events are written, so two makings of one fork never touch each other's.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from runtime.agent_files import remove_tree
from runtime.events import (
    CandidateCommitted,
    Integrated,
    ToolReturned,
    WorkspacePrepared,
    WorktreeAdded,
    WorktreeRemoved,
)
from runtime.fork import WRITES, Fork, ForkRefused


def restore_workspace(fork: Fork, root: Path) -> None:
    """The fork's workspace restored straight into its own directory (stage_workspace, then
    place_workspace): for a fork nobody else can be making at the same time."""
    place_workspace(fork, root, stage_workspace(fork, root))


def stage_workspace(fork: Fork, root: Path) -> Path | None:
    """The fork's workspace as the parent's stood at the fork point: a clone of the parent's
    repository (every commit the run made is in it) with main, the task branches and HEAD where
    the prefix's events left them. None when the fork has no workspace. Refused when the
    parent's workspace is gone, or when the prefix holds edits after the last commit (they are
    in no commit to return to).

    Made in a directory of its own beside the fork's (`<fork's>.<random>.staged`), never in the
    fork's: place_workspace moves it there once the fork's events are written, discard_workspace
    removes it when they are not. Two makings of one fork (a keyed fork sent twice at once) so
    never touch each other's workspace, and the one whose write loses removes only its own,
    not the workspace of the fork the other wrote."""
    from runtime import workspace  # git and files: only hosts that fork a workspace need it

    if fork.parent_workspace is None or fork.commit is None:
        return None
    # Said without the directory: the message reaches pages and API answers, which never show
    # where the server keeps its files.
    gone = ForkRefused(
        f"run {fork.parent}'s workspace is not on this server (a journal imported without it, "
        "or a workspace since removed): a fork of a team that works in a repository needs the "
        "parent's repository"
    )
    try:
        source = workspace.located(root, fork.parent_workspace)
    except ValueError:
        raise gone from None  # a name no workspace here has (an absolute path, say)
    if not (source / ".git").is_dir():
        raise gone
    branches, head, _ = refs_at(fork)
    staged = workspace.located(root, f"{fork.config.workspace}.{uuid.uuid4().hex[:12]}.staged")
    try:
        workspace.clone_at(source, staged, branches, head, root)
    except BaseException:
        discard_workspace(staged)  # a half-made clone is no workspace of anything
        raise
    return staged


def place_workspace(fork: Fork, root: Path, staged: Path | None) -> None:
    """Move the workspace stage_workspace made into the fork's own directory, once the fork's
    events are written: the fork is this one's, and so is the directory named for it."""
    from runtime import workspace

    if staged is None:
        return
    own = workspace.located(root, fork.config.workspace)
    if own.is_symlink():
        own.unlink()
    elif own.exists():
        remove_tree(own)  # left by nobody's run: the fork's id was free until its write
    staged.rename(own)
    # Git keeps a worktree's path in both repositories: made beside the clone only once it is
    # where it stays (the tester's, mid-verify).
    for name, commit in refs_at(fork)[2].items():
        workspace.add_checkout(own, name, commit)


def discard_workspace(staged: Path | None) -> bool:
    """Remove a workspace stage_workspace made: its fork's events were not written (the append
    failed, or another request wrote the same fork first), so no run works in it. False when
    there is none to remove."""
    if staged is not None and staged.is_dir() and not staged.is_symlink():
        remove_tree(staged)
        return True
    return False


def refs_at(fork: Fork) -> tuple[dict[str, str], str, dict[str, str]]:
    """The repository's branches (name -> commit) and checked-out branch at the fork point,
    from the events that moved them: the workspace's first commit, each candidate committed
    on its task branch, each integration into main. And the worktrees of agents that commit
    nothing open there (name -> the commit each is at): the fork's workspace gets them again.
    What such an agent wrote in its worktree went away with it (WorktreeRemoved)."""
    branches: dict[str, str] = {}
    head = "main"
    edited: ToolReturned | None = None
    looking: dict[str, WorktreeAdded] = {}  # by agent: the worktree it works in now
    edits: dict[str, ToolReturned] = {}  # by agent: its last edit there
    for _, event in fork.events:
        if isinstance(event, WorkspacePrepared):
            branches, head, edited = {"main": event.commit}, "main", None
            looking, edits = {}, {}
        elif isinstance(event, CandidateCommitted):
            branches[event.branch] = event.commit
            head, edited = event.branch, None
        elif isinstance(event, Integrated):
            branches["main"] = event.commit
            head, edited = "main", None
        elif isinstance(event, WorktreeAdded) and not event.branch:
            looking[event.agent or ""] = event
        elif isinstance(event, WorktreeRemoved):
            looking.pop(event.agent or "", None)
            edits.pop(event.agent or "", None)
        elif isinstance(event, ToolReturned) and event.tool in WRITES and event.error is None:
            if (event.agent or "") in looking:
                edits[event.agent or ""] = event
            else:
                edited = event
    if edited is not None:
        raise ForkRefused(
            f"the workspace at the fork point holds {edited.agent}'s edits that no commit "
            "records yet: fork before that edit, or after the work is committed"
        )
    stray = next(iter(edits.values()), None)
    if stray is not None:
        raise ForkRefused(
            f"{stray.agent}'s worktree at the fork point holds its edits, which no commit "
            "records: fork before that edit, or after its worktree is taken away"
        )
    return branches, head, {e.writer: e.base for e in looking.values()}
