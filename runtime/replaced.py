"""Writing a file whole or not at all: the output of a command (an export, a trace) is written
beside its path and moved over it once complete, so a failure part way (a full disk, Ctrl-C,
a journal refused half way through) leaves the path as it was, not half a file, and leaves no
part file behind."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def replaced(path: Path, mode: str = "wb") -> Iterator[IO[Any]]:
    """A new file beside `path` to write (text in UTF-8 unless `mode` is binary), moved over
    `path` when the block ends without an error; removed when it does not. The file gets the
    mode open() would have given it (the umask's), not a temporary file's 0600.

    Only a regular file (or none yet) is replaced so, through a link to it where `path` is
    one: a device, a pipe or a descriptor (`-o /dev/null`, `-o >(gzip > t.gz)`) is written to
    as it stands, where a rename put a regular file in its place."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if path.exists() and not path.is_file():
        with path.open(mode, encoding=None if "b" in mode else "utf-8") as out:
            yield out
        return
    path = path.resolve() if path.is_symlink() else path
    part: Path | None = None
    try:
        with tempfile.NamedTemporaryFile(
            mode,
            encoding=None if "b" in mode else "utf-8",
            dir=path.parent,
            prefix=f".{path.name}.",
            suffix=".part",
            delete=False,
        ) as out:
            part = Path(out.name)
            yield out
        part.chmod(0o666 & ~umask())
        os.replace(part, path)
    except BaseException:
        if part is not None:
            part.unlink(missing_ok=True)
        raise


def unwritable(path: Path, noun: str) -> str | None:
    """Why `replaced` could not write `path`, in a sentence naming what is written (`noun`:
    "export", "backup"); None when nothing is seen in the way. Asked before anything is
    written, so that a command names what to mend: its write said only "No such file or
    directory" of a folder that is not there, or "Permission denied" of a part file it never
    asked for. A regular file is written beside `path` and moved over it, so its folder must
    take a new file; a device or a pipe is written as it stands, and only it is asked."""
    try:
        mode: int | None = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except PermissionError:
        return f"{path}: a folder on its way is closed to this user (no permission to look in it)"
    if mode is not None and stat.S_ISDIR(mode):
        return f"{path} is a folder: name the {noun}'s file in it"
    if mode is not None and not os.access(path, os.W_OK):
        return f"{path} is read-only to this user: name another file, or make it writable"
    if mode is not None and not stat.S_ISREG(mode):
        return None
    # Not there, or a regular file: it reached its folder, if it is one (an ENOENT or ENOTDIR
    # before it means a folder on the way is not there or is a file).
    if not path.parent.is_dir():
        return f"{path}: there is no folder {path.parent} to write it in"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return f"{path}: this user may not write in the folder {path.parent}"
    return None


SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def holds_a_database(path: Path) -> bool:
    """Whether `path` is a regular file that starts as an SQLite database does: a store, a
    backup of one. An export or a trace written there would replace it whole, so the commands
    that write one refuse it (a backup may replace another backup: it says --force)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return False  # a pipe is never opened here to look: it would wait for a writer
        with path.open("rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:  # not there, or not readable: the write's own checks say what is wrong
        return False


def same_file(a: Path, b: Path) -> bool:
    """Whether the two paths name one file (a link, another spelling of the path)."""
    try:
        return a.samefile(b)
    except OSError:  # one of them is not there: not the same
        return False
