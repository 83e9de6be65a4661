"""What agent code leaves in a workspace, read and acted on by the worker with its own rights.

Agent tests run in the sandbox with write access to the workspace and to their scratch
directory, and what they leave there is then handled outside it: the worker reads pytest's
report and snapshots what a test run may not change, the file tools open what the agent names,
and the harness's git adds and commits the whole tree. So:

- nothing there is opened before it is known to be a regular file, and never through a link:
  a FIFO would block the worker's open() for good (a thread and a temporary directory lost on
  every call), and a link would have it read or write a file of the host's choosing;
- nothing is written through a hard link: it is a regular file, but also a file under another
  name, perhaps one the writing agent may not edit (a source file, for the tester);
- what agent code made is removed whatever permissions it left on it (`remove_tree`), and
  opened to its owner before git adds it, which passes over what it cannot open (`opened_for_git`);
- no git repository but the workspace's own is ever added: git runs commands named in a
  repository's config (core.fsmonitor, for one) when it looks inside it, and `git status` looks
  inside every repository the index holds, so a repository planted under the workspace would
  run its config's commands with the worker's rights at the harness's next commit.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from runtime.tools import ToolFailure


class NotAFile(ToolFailure):
    """A path agent code could have made names something other than a regular file."""


class HardLinked(ToolFailure):
    """A regular file with more than one name (a hard link): a write through one name changes
    them all, and agent code may have linked a file its agent may not write to a path it may
    (the links are no symlinks, so O_NOFOLLOW does not see them)."""


class WorkspaceTampered(RuntimeError):
    """The workspace holds what no agent may leave there for the harness's git: the step stops,
    and the message names it (a person decides, as for any step that keeps failing)."""


def kind_of(mode: int) -> str:
    return {
        stat.S_IFIFO: "a FIFO",
        stat.S_IFSOCK: "a socket",
        stat.S_IFCHR: "a device",
        stat.S_IFBLK: "a device",
        stat.S_IFDIR: "a directory",
        stat.S_IFLNK: "a symbolic link",
    }.get(stat.S_IFMT(mode), "not a regular file")


def read_regular(path: Path, limit: int | None, label: str) -> bytes:
    """The bytes of the regular file at `path`, opened without following a link and without
    waiting for a writer; refused (NotAFile) if it is anything else or longer than `limit`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if os.path.islink(path):
            raise NotAFile(f"{label} is a symbolic link, not a file") from None
        raise NotAFile(f"{label} cannot be read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"{label} is {kind_of(info.st_mode)}, not a file")
        if limit is None:
            return f.read()
        data = f.read(limit + 1)  # its size may have changed since fstat
        if info.st_size > limit or len(data) > limit:
            raise ToolFailure(f"{label} is larger than {limit} bytes")
        return data


def write_regular(path: Path, data: bytes, label: str) -> None:
    """Write `data` as the whole of the regular file at `path` (made if missing); refused
    (NotAFile) if something else is there, and (HardLinked) if the file has other names too.
    Opened without waiting: a FIFO nobody reads fails at once instead of blocking."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        kind = kind_of(os.lstat(path).st_mode) if os.path.lexists(path) else None
        why = f"{label} is {kind}, not a file" if kind else f"{label}: {exc.strerror}"
        raise NotAFile(why) from None
    with os.fdopen(fd, "wb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"{label} is {kind_of(info.st_mode)}, not a file")
        if info.st_nlink > 1:  # checked on the file opened, so no link made since escapes it
            raise HardLinked(
                f"{label} is a hard link: the file has {info.st_nlink} names, and a write "
                "through this one would change the file under every other name too; nothing "
                "was written"
            )
        f.truncate(0)
        f.write(data)


def walk(top: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """What os.walk(top) gives (top-down, the caller may prune `dirnames`, links to directories
    listed among them and never followed, a directory that cannot be read passed over), without
    its recursion: a test that made a tree 1,200 directories deep (2,400 characters of path) had
    every os.walk of the workspace raise RecursionError, and with it the candidate's commit
    (refuse_nested_repositories) at every retry, list_files, and the jurisdiction's restore,
    before it had put back what the run changed outside it."""
    stack = [os.fspath(top)]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as listing:
                entries = list(listing)
        except OSError:
            continue
        dirnames: list[str] = []
        filenames: list[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(entry.name)
        yield here, dirnames, filenames
        for name in reversed(dirnames):  # in the caller's order, each subtree before the next
            below = os.path.join(here, name)
            if not os.path.islink(below):
                stack.append(below)


def remove_tree(path: Path) -> None:
    """Remove the directory `path` and everything in it, whatever agent code left there: a
    directory it made with mode 000 (`os.chmod(d, 0)` in a test) cannot be listed, and one of
    mode 500 cannot have its entries removed, by a worker that is not root; a tree 1,200 deep
    took shutil.rmtree past Python's recursion limit, and one deeper than PATH_MAX (4,096
    bytes of path, made a directory at a time) is out of reach of any call given its whole
    path. Either way the worktree, workspace or copy could never be taken away, and the step
    doing it failed on every retry. So each directory below is first moved up to lie directly
    in `path` (every path used stays short), opened to its owner, emptied, and removed at the
    end; links are removed, never followed."""
    top = os.fspath(path)
    if os.path.islink(top):
        raise NotAFile(f"{top} is a symbolic link, not a directory to remove")
    _opened(top)
    emptied, queue, moved = [top], [top], 0
    while queue:
        here = queue.pop()
        with os.scandir(here) as listing:
            entries = list(listing)
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
                continue
            _opened(entry.path)  # moving a directory rewrites its `..`: it must be writable
            if here == top:
                below = entry.path
            else:
                while os.path.lexists(below := os.path.join(top, f".removing-{moved}")):
                    moved += 1
                os.rename(entry.path, below)
            emptied.append(below)
            queue.append(below)
    for here in reversed(emptied):  # empty now: their directories were moved up
        os.rmdir(here)


def _opened(directory: str) -> None:
    """The directory (never a link: lstat) readable, writable and searchable by its owner."""
    mode = stat.S_IMODE(os.lstat(directory).st_mode)
    if mode & stat.S_IRWXU != stat.S_IRWXU:
        os.chmod(directory, mode | stat.S_IRWXU)


@contextlib.contextmanager
def scratch(prefix: str, quiet: bool = False) -> Iterator[Path]:
    """A temporary directory agent code may fill, taken away after by `remove_tree`: the
    cleanup of tempfile.TemporaryDirectory is shutil.rmtree's (a tree 1,200 deep raised
    RecursionError out of the pytest run, or of the suite check at every retry, and left the
    tree in the system's temporary directory). `quiet`: a failure to remove it is not said."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        with contextlib.suppress(OSError) if quiet else contextlib.nullcontext():
            remove_tree(path)


def opened_for_git(root: Path) -> None:
    """Give the owner back the use of everything agent code left under `root` (the workspace's
    own `.git` aside) before the harness's git adds it: `git add -A` passes over a directory
    it cannot open with a warning and status 0, so a test that made one and locked it
    (`os.chmod(d, 0)`) had the candidate committed without what it wrote there, unlike the
    tree that was tested; and a file it cannot read fails the whole add. Directories get the
    owner's rwx, files the owner's read (git records neither: only the owner's x of a file).
    Links are left as they are. What cannot be opened (not the worker's to change)
    refuses the commit (WorkspaceTampered), naming it."""
    base, shut = Path(root), []
    for dirpath, dirnames, filenames in walk(base):
        here = Path(dirpath)
        if here == base:
            dirnames[:] = [d for d in dirnames if d != ".git"]
            filenames = [f for f in filenames if f != ".git"]
        for name, wanted in [(d, stat.S_IRWXU) for d in dirnames] + [
            (f, stat.S_IRUSR) for f in filenames
        ]:
            path = here / name
            try:
                info = path.lstat()
                kind = stat.S_IFMT(info.st_mode)
                if kind in (stat.S_IFDIR, stat.S_IFREG) and info.st_mode & wanted != wanted:
                    # lstat said no link, and no agent code runs while the harness commits
                    os.chmod(path, stat.S_IMODE(info.st_mode) | wanted)
            except OSError as exc:
                shut.append(f"{path.relative_to(base).as_posix()} ({exc.strerror})")
    if shut:
        raise WorkspaceTampered(
            f"agent code left {len(shut)} paths the harness cannot open for its commit: "
            f"{', '.join(shut[:5])}{', ...' if len(shut) > 5 else ''}; git would leave them "
            "out of the candidate, which would then differ from the tree that was tested"
        )


def nested_repositories(root: Path) -> list[str]:
    """Every `.git` below the workspace's own (a directory, a file or a link, at any depth):
    what `git add -A` would take in as another repository. Links are not followed."""
    found = []
    base = Path(root)
    for dirpath, dirnames, filenames in walk(base):
        here = Path(dirpath)
        if here == base:
            dirnames[:] = [d for d in dirnames if d != ".git"]
        elif ".git" in dirnames or ".git" in filenames:
            found.append((here / ".git").relative_to(base).as_posix())
            dirnames[:] = [d for d in dirnames if d != ".git"]
    return sorted(found)


def refuse_nested_repositories(root: Path) -> None:
    found = nested_repositories(root)
    if found:
        raise WorkspaceTampered(
            f"the workspace holds another git repository ({', '.join(found[:5])}"
            f"{', ...' if len(found) > 5 else ''}); agent code left it there, and the harness "
            "commits no repository but the workspace's own: git would run what its config names"
        )


def checked_worktree(root: Path, path: Path) -> Path:
    """A writer's worktree's `.git` must still be the file git wrote: a pointer to its entry
    under the workspace's own `.git/worktrees` (returned). Agent code that could rewrite it
    would point it at a repository of its own making, whose config git obeys."""
    entry = Path(path) / ".git"
    try:
        text = read_regular(entry, 4096, f"{entry}").decode("utf-8")
    except (NotAFile, UnicodeDecodeError) as exc:
        raise WorkspaceTampered(f"the worktree's .git is not git's own pointer: {exc}") from None
    where = text.strip().removeprefix("gitdir: ")
    admin = (Path(root) / ".git" / "worktrees").resolve()
    if not text.startswith("gitdir: ") or Path(where).resolve().parent != admin:
        raise WorkspaceTampered(
            f"the worktree {path} names {where!r} as its repository, not an entry of {admin}"
        )
    return Path(where).resolve()
