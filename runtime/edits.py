"""edit_file's write-ahead record: a call run again answers as its first run did.

A worker killed after a tool ran and before its ToolReturned was written leaves a call the
resumed step runs again (runtime/session.py). Most tools do the same thing twice: write_file
writes the whole content again. edit_file replaces the one occurrence of a text, and that
does not: run again, an edit whose new text holds the old one was made twice, and any other
found nothing to replace and was journalled as a failure, though the file had been changed.

So before it writes, edit_file records which call it is (runtime/tools.py `Call`), the file's
sha256 as it found it and as the edit leaves it. Run again under the same call, the edit finds
the file as it left it (the same answer, nothing written), or as it found it (the edit is made,
as the first run would have made it), or neither: somebody changed the file between the two
runs, and the edit fails naming it rather than guess.

The record lives in the repository's git directory (a writer's worktree's own, under the
workspace's .git/worktrees): the agents' file tools refuse any path in .git, the sandbox binds
a workspace's .git read-only (and a worktree's repository not at all), and a test run's
jurisdiction snapshot (runtime/jurisdiction.py) neither reads nor restores it. Agent code can
neither reach nor forge it, unless the operator ran it without the sandbox. One record per
stream, the latest: a stream runs its calls one after another, and only its last can be run
again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from runtime.agent_files import read_regular
from runtime.tools import Call, ToolFailure

# What a worktree's .git pointer may hold, read as git reads it.
POINTER_BYTES = 4096


class EditLost(ToolFailure):
    """A call of edit_file run again found its file neither as it found it nor as it left it."""


@dataclass(frozen=True)
class Intent:
    """What one call of edit_file was about to do to one file."""

    stream: str
    at: int
    path: str  # relative to the workspace
    before: str  # the file's sha256 as the call found it
    after: str  # as the edit leaves it


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def store_of(root: Path) -> Path:
    """Where the records of the workspace (or writer's worktree) at `root` are kept: in its git
    directory; ToolFailure naming `root` if it has none."""
    dot = Path(root) / ".git"
    if dot.is_dir() and not dot.is_symlink():
        return dot / "minutes" / "edits"
    if dot.is_file() and not dot.is_symlink():
        text = read_regular(dot, POINTER_BYTES, str(dot)).decode("utf-8", "replace")
        where = (Path(root) / text.removeprefix("gitdir: ").strip()).resolve()  # or relative
        # A worktree's entry in its repository: <repository>/.git/worktrees/<name>
        if (
            text.startswith("gitdir: ")
            and where.is_dir()
            and where.parent.name == "worktrees"
            and where.parent.parent.name == ".git"
        ):
            return where / "minutes" / "edits"
    raise ToolFailure(
        f"{root} is not a git workspace: edit_file keeps the record that makes it safe to run "
        "again in the repository's git directory, and there is none"
    )


class WriteAhead:
    """One call of edit_file's record, in the workspace (or writer's worktree) at `root`."""

    def __init__(self, root: Path, call: Call) -> None:
        self.store = store_of(root)
        self.call = call
        self.file = self.store / f"{digest(call.stream.encode())[:32]}.json"

    def recorded(self) -> Intent | None:
        """The record this call left, if it got as far as writing one."""
        try:
            intent = Intent(**json.loads(self.file.read_text()))
        except FileNotFoundError:
            return None
        except (ValueError, TypeError) as exc:
            raise ToolFailure(f"edit_file's record {self.file} cannot be read: {exc}") from None
        return intent if (intent.stream, intent.at) == (self.call.stream, self.call.at) else None

    def redone(self, rel: str, target: Path, limit: int) -> bool:
        """Whether this call already made its edit of `rel` (at `target`): True, the file is
        as the edit left it; False, nothing says so (not run before, or stopped before it
        wrote) and the edit is to be made. EditLost when the file is neither as the call found
        it nor as it left it (`limit`: the most either can hold)."""
        intent = self.recorded()
        if intent is None or intent.path != rel:
            return False
        try:
            now: str | None = digest(read_regular(target, limit, rel))
        except ToolFailure:  # gone, no longer a file, or larger than either: neither
            now = None
        if now == intent.after:
            return True
        if now == intent.before:
            return False
        raise EditLost(
            f"{rel} changed since this edit_file call was first run (its result was never "
            "recorded): it is neither as the call found it nor as the call left it, so the "
            "edit is neither made again nor said to be made; read the file and edit it again"
        )

    def keep(self, rel: str, found: bytes, result: bytes) -> None:
        """Record, before the edit is written and durably, that this call turns `found` into
        `result` in `rel`: a record that lost the race with its edit to the disk would leave
        the edit to be made again."""
        intent = Intent(self.call.stream, self.call.at, rel, digest(found), digest(result))
        self.store.mkdir(parents=True, exist_ok=True)
        fresh = self.file.with_name(f"{self.file.name}.{os.getpid()}.new")
        with open(fresh, "w") as f:
            json.dump(asdict(intent), f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(fresh, self.file)
        folder = os.open(self.store, os.O_RDONLY)
        try:
            os.fsync(folder)  # the rename itself
        finally:
            os.close(folder)
