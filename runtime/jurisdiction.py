"""What a restricted agent's test run may change: nothing outside the paths the agent may edit.

Before the run, every file outside them is noted by its metadata and a hash of its content,
read in chunks; after it, a path whose metadata is as it was is unchanged (the kernel moves a
file's ctime on every write or chmod, and agent code cannot set it back as it can the mtime),
and only a file whose metadata moved but whose size and mode did not is hashed again. A path
the run made is deleted unread; a changed or deleted one is put back from a copy.

The copies are made while hashing, one read per file, into a temporary directory outside the
workspace (out of the sandbox's sight too: it binds the workspace and its scratch directory
only). Not into the worker's memory: what lies outside a tester's jurisdiction is whatever the
other agents' runs left there, gigabytes as well as the product's sources, and a bounded copy
would leave the rest unrestorable. Not from git: a file there may hold another agent's work
not committed yet. The cost is writing that tree once more per run, for a product's sources a
few hundred kilobytes, into the system's temporary directory ($TMPDIR): a disk, or memory
where /tmp is a tmpfs (the worker's host chooses; the copies are the files as they were before
the run, not what the run wrote).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runtime.agent_files import NotAFile, kind_of, remove_tree, walk
from runtime.tools import ToolFailure

CHUNK = 1 << 20
LISTED = 20  # changed paths a refusal names; it counts the rest


class OutsideJurisdiction(ToolFailure):
    """A test run changed files its agent may not edit; the changes were reverted."""


@dataclasses.dataclass(frozen=True)
class Entry:
    """One path outside the jurisdiction as it was (or is)."""

    kind: str  # "file", "link" or "other" (a FIFO or a socket: never opened)
    mode: int  # a file's permission bits; the whole st_mode otherwise
    size: int = 0
    stamp: tuple[int, int, int, int] = (0, 0, 0, 0)  # device, inode, mtime_ns, ctime_ns
    digest: bytes = b""  # a file's sha256, a link's target
    copy: Path | None = None  # where a file's content was kept, before the run
    # A file's names (its hard links): a link the run made to it from where the agent may
    # write would let the agent's file tools write through to it.
    names: int = 1


Snapshot = dict[str, Entry]


def countdown(seconds: float, least: float = 1.0) -> Callable[[], float]:
    """What is left of `seconds` from now when called (never under `least`): the snapshot's
    time comes out of the run's own timeout, not out of the margin its tool leaves for the
    restore (runtime/tools.py abandons a tool that outlasts that, and a restore still going
    on behind the agent's next call would race it)."""
    end = time.monotonic() + seconds
    return lambda: max(end - time.monotonic(), least)


def _open_regular(path: Path, rel: str) -> int:
    """A descriptor of the regular file at `path`: never through a link, never waiting for a
    writer (agent_files.read_regular says why)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotAFile(f"{rel} is {kind_of(info.st_mode)}, not a file")
    return fd


def _digest(path: Path, rel: str, copy: Path | None = None) -> tuple[bytes, os.stat_result]:
    """The sha256 of a regular file, read in chunks (and written to `copy` as it is read)."""
    with (
        os.fdopen(_open_regular(path, rel), "rb") as f,
        open(copy, "xb") if copy else contextlib.nullcontext() as out,
    ):
        info = os.fstat(f.fileno())
        sha = hashlib.sha256()
        while chunk := f.read(CHUNK):
            sha.update(chunk)
            if out is not None:
                out.write(chunk)
    return sha.digest(), info


def _entry(path: Path, info: os.stat_result) -> Entry:
    """What an lstat says of a path (a file's digest is filled in only where needed)."""
    if stat.S_ISLNK(info.st_mode):
        return Entry("link", 0, digest=os.readlink(path).encode())
    if stat.S_ISREG(info.st_mode):
        stamp = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        return Entry("file", info.st_mode & 0o7777, info.st_size, stamp, names=info.st_nlink)
    return Entry("other", info.st_mode)


Dirs = dict[str, int]  # every directory (the workspace's own as "."), by its permission bits


def walked(root: Path, keep: Callable[[str], bool]) -> tuple[dict[str, os.stat_result], Dirs]:
    """The lstat of every path (not directory) for which `keep(path)` holds, and every
    directory with its permission bits, outside .git."""
    found: dict[str, os.stat_result] = {}
    base = root.resolve()
    dirs: Dirs = {".": base.stat().st_mode & 0o7777}
    for dirpath, dirnames, filenames in walk(base):
        dirnames[:] = [d for d in dirnames if not (dirpath == str(base) and d == ".git")]
        here = Path(dirpath)
        for d in dirnames:
            dirs[(here / d).relative_to(base).as_posix()] = (here / d).lstat().st_mode & 0o7777
        for name in [*filenames, *(d for d in dirnames if (here / d).is_symlink())]:
            path = here / name
            rel = path.relative_to(base).as_posix()
            if keep(rel):
                found[rel] = path.lstat()
    return found, dirs


def snapshot(root: Path, keep: Callable[[str], bool], aside: Path) -> tuple[Snapshot, Dirs]:
    """The paths for which `keep(path)` holds, each file's content copied into `aside`."""
    base = root.resolve()
    found, dirs = walked(base, keep)
    files: Snapshot = {}
    for number, (rel, info) in enumerate(sorted(found.items())):
        if stat.S_ISREG(info.st_mode):
            copy = aside / str(number)  # a number, not the path: nothing named by agent code
            digest, info = _digest(base / rel, rel, copy)
            files[rel] = dataclasses.replace(_entry(base / rel, info), digest=digest, copy=copy)
        else:
            files[rel] = _entry(base / rel, info)
    return files, dirs


def _unchanged(path: Path, rel: str, before: Entry | None, now: Entry | None) -> bool:
    if before is None or now is None or before.kind != now.kind or before.mode != now.mode:
        return before == now
    if before.kind != "file":
        return before.digest == now.digest
    if before.size != now.size or before.names != now.names:
        return False
    # Same metadata: not written since (ctime cannot be set back). Moved: read the content.
    return before.stamp == now.stamp or _digest(path, rel)[0] == before.digest


def modes_put_back(base: Path, dirs: Dirs) -> list[str]:
    """Give each directory there before the run its permission bits back, parents first: a
    run that took them away (`chmod 000 src`) hid the directory's files from the walk that
    looks for changes (and from a worker not running as root, from the restore and from
    git's next commit). The directories whose bits had changed."""
    moved = []
    for rel, mode in sorted(dirs.items()):
        path = base / rel
        if path.is_dir() and not path.is_symlink() and path.lstat().st_mode & 0o7777 != mode:
            path.chmod(mode)
            moved.append(rel)
    return moved


def opened(base: Path, dirs: Dirs) -> None:
    """Give the owner back the use of each directory the run made and locked (`os.chmod(d, 0)`
    in a test): one nobody can list hid what the run left in it from the walk that looks for
    changes, and a worker not running as root failed on it at the end of every run after
    (PermissionError), and could not take the worktree away. What the run made is the run's:
    its bits are not put back, only opened to the worker."""
    for dirpath, dirnames, _ in walk(base):
        here = Path(dirpath)
        for name in dirnames:
            path = here / name
            rel = path.relative_to(base).as_posix()
            info = path.lstat()
            locked = info.st_mode & stat.S_IRWXU != stat.S_IRWXU
            if rel != ".git" and rel not in dirs and stat.S_ISDIR(info.st_mode) and locked:
                path.chmod(stat.S_IMODE(info.st_mode) | stat.S_IRWXU)


def restore(root: Path, keep: Callable[[str], bool], before: Snapshot, dirs: Dirs) -> list[str]:
    """Put every kept path back as it was in `before`; the paths that had changed (a
    directory outside the jurisdiction whose permission bits the run changed among them)."""
    base = root.resolve()
    moved = [rel for rel in modes_put_back(base, dirs) if rel == "." or keep(rel)]
    opened(base, dirs)
    found, after_dirs = walked(base, keep)
    after = {rel: _entry(base / rel, info) for rel, info in found.items()}
    changed = sorted(
        rel
        for rel in before.keys() | after.keys()
        if not _unchanged(base / rel, rel, before.get(rel), after.get(rel))
    )
    for rel in changed:
        path = base / rel
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        elif os.path.lexists(path):
            path.unlink()  # a file, a link, or a FIFO or socket nothing may open: never read
        if rel in before:
            entry = before[rel]
            path.parent.mkdir(parents=True, exist_ok=True)
            # Sorted, a link the run put in place of a directory was taken out before its
            # files come back; this makes sure nothing is written through one.
            parent = path.parent.resolve()
            if parent != base and base not in parent.parents:
                raise ToolFailure(f"{rel} would be put back outside the workspace")
            if entry.kind == "link":
                os.symlink(entry.digest.decode(), path)
            elif entry.copy is not None:  # a new file: a name linked to the old one keeps that
                shutil.copyfile(entry.copy, path, follow_symlinks=False)
                path.chmod(entry.mode)
    for rel in sorted(after_dirs.keys() - dirs.keys(), key=len, reverse=True):
        path = base / rel
        if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()  # a directory the run made for files that were taken back out
    return sorted([*moved, *changed])


def within_jurisdiction(
    root: Path, writable: Callable[[str], bool], run: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """Run agent code for an agent that may edit only `writable` paths: whatever it changed
    outside them is reverted, and the run fails with the list (it is no evidence)."""
    outside = lambda rel: not writable(rel)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="minutes-jurisdiction-") as aside:
        before, dirs = snapshot(root, outside, Path(aside))
        failure: ToolFailure | None = None
        try:
            result = run()
        except ToolFailure as exc:
            failure = exc
        changed = restore(root, outside, before, dirs)
    if changed:
        more = len(changed) - LISTED
        listed = ", ".join(changed[:LISTED]) + (f" and {more} more" if more > 0 else "")
        raise OutsideJurisdiction(
            f"the test run changed {listed}, outside what this agent may edit; "
            "those changes were reverted and this run counts for nothing"
        )
    if failure is not None:
        raise failure
    return result
