"""The harness's merge of a branch into a workspace's main, which never leaves it mid-merge.

A merge that conflicts stops git half-way: conflict markers in the working tree, unmerged
paths in the index, MERGE_HEAD set. Left so, every later git command of the harness that
needs a clean index (the next `checkout main`, a candidate's commit) fails, on every resume,
and the run can only end in a dead letter. So a conflicting merge is aborted before it is
reported (MergeConflict, naming the files), and a merge a crash interrupted (MERGE_HEAD still
there when the merge is tried again on resume) is aborted before anything else is done.
"""

from __future__ import annotations

from pathlib import Path

from runtime.git_run import git
from runtime.tools import ToolExit


class MergeConflict(Exception):
    """The branch and main changed the same files differently: nothing was merged and main's
    working tree is as it was before the merge was tried."""

    def __init__(self, branch: str, files: list[str]) -> None:
        self.branch = branch
        self.files = files
        named = ", ".join(files) or "files git did not name"
        super().__init__(
            f"merging {branch} into main conflicts in {named}: main changed them since the "
            "branch left it; the merge was aborted and main is as it was"
        )


def merging(root: Path) -> bool:
    """Whether a merge stands unfinished in the repository at `root` (MERGE_HEAD is set)."""
    try:
        git(root, "rev-parse", "-q", "--verify", "MERGE_HEAD")
    except ToolExit:
        return False
    return True


def settle(root: Path) -> None:
    """Abort an unfinished merge, if one stands: back to the commit before it, clean."""
    if merging(root):
        git(root, "merge", "--abort")


def merge(root: Path, branch: str, message: str, commit: str | None = None) -> str:
    """Merge `branch` into main (a real merge commit); main's new commit id. Idempotent (a
    crash may run it twice): a merge already done is not done again, and one the crash left
    unfinished is aborted first. A conflict raises MergeConflict, the merge aborted.

    `commit`: the commit of `branch` to merge, the one its reviewer accepted. That commit is
    merged by its id, never the branch's tip: a commit added to the branch after the review
    (or while the merge starts) was never reviewed, and stays on the branch, out of main."""
    settle(root)
    head = git(root, "rev-parse", "--verify", "-q", f"{commit or branch}^{{commit}}")
    git(root, "checkout", "-q", "main")
    try:
        git(root, "merge-base", "--is-ancestor", head, "main")
        return git(root, "rev-parse", "main")  # merged already
    except ToolExit:
        pass
    try:
        git(root, "merge", "-q", "--no-ff", "-m", message, head)
    except ToolExit:
        if not merging(root):
            raise  # refused before it started (nothing to abort): not a conflict
        files = git(root, "diff", "--name-only", "--diff-filter=U").splitlines()
        git(root, "merge", "--abort")
        raise MergeConflict(branch, files) from None
    return git(root, "rev-parse", "main")
