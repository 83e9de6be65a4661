"""How much a run of agent code has added to the host directories it may write: bytes, and
files (inodes).

`Limits.file_bytes` bounds one file; nothing else bounded the total, and a test could write
thousands of big files into its workspace or scratch directory, or millions of empty ones, which
take no bytes to speak of and every inode of the filesystem. The run's wait loop asks
`DiskWatch.over` at each tick; it answers which limit (`Limits.disk_bytes`, `Limits.files`) a
directory is past, and which directory, if one is.

Measuring a worktree means walking it, which at 100,000 files costs a good part of a second:
not something to do every tick. So the watch looks first at what is cheap, the used space and
used inodes of the filesystems the directories are on (one statvfs each), and walks the
directories only when either has grown by its limit or more since the run started: a run that
writes little is never walked. The filesystems count everybody's writes, so they only say when to
look; the walk counts what this run made or changed (entries whose ctime is after its start:
their number, and their allocated blocks; a hard-linked file once), and walks are spaced by ten
times the last one's cost, so however busy the filesystem is, the watch takes a tenth of a core
at most. A modified file older than the run counts whole, as if new: an over-count towards the
limits, never an under-count. A filesystem that counts no inodes (f_files 0, as btrfs answers)
gives no cheap look at them: its directories are walked at that spacing whatever they hold.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

TICK = 0.1  # seconds between looks at the filesystems' used space (a statvfs each: microseconds)


BYTES, FILES = "bytes", "files"  # the two limits, as `over` names them


def _used(path: Path) -> tuple[int, int | None]:
    """The filesystem's used bytes and used inodes (None: it counts none)."""
    fs = os.statvfs(path)
    inodes = fs.f_files - fs.f_ffree if fs.f_files else None
    return (fs.f_blocks - fs.f_bfree) * fs.f_frsize, inodes


class DiskWatch:
    """`places`: each writable directory by the words that name it ("its workspace");
    `limit`: the bytes they may gain, `files`: the files (and directories, links) they may."""

    def __init__(
        self, places: dict[str, Path], limit: int, files: int, skip: frozenset[Path]
    ) -> None:
        self.places, self.limit, self.files, self.skip = places, limit, files, skip
        self.since = time.time()
        self.devices: dict[int, Path] = {}
        for path in places.values():
            self.devices.setdefault(path.stat().st_dev, path)
        self.before = {dev: _used(path) for dev, path in self.devices.items()}
        self.next_look = time.monotonic() + TICK
        self.next_walk = 0.0

    def grown(self) -> tuple[int, int | None]:
        """What the filesystems' used space and used inodes have grown by since the start,
        everybody's writes; inodes None where a filesystem counts none."""
        space, inodes = 0, 0
        for dev, path in self.devices.items():
            (bytes_before, inodes_before), (bytes_now, inodes_now) = self.before[dev], _used(path)
            space += max(bytes_now - bytes_before, 0)
            if inodes_before is None or inodes_now is None:
                return space, None
            inodes += max(inodes_now - inodes_before, 0)
        return space, inodes

    def over(self, last: bool = False) -> tuple[str, str] | None:
        """The limit a directory is past (BYTES or FILES) and the words naming the directory
        the run filled most, if one is. `last`: the run has ended; look now, whatever the
        spacing."""
        now = time.monotonic()
        if now < self.next_look and not last:
            return None
        self.next_look = now + TICK
        grown, made = self.grown()
        if grown < self.limit and made is not None and made < self.files:
            return None
        if now < self.next_walk and not last:
            return None
        added, counted, hidden = self.walk()
        self.next_walk = time.monotonic() + 10 * (time.monotonic() - now)
        total, files = sum(added.values()), sum(counted.values())
        if hidden:
            # A directory the run locked (chmod 0, a worker not root) hides what is in it from
            # the walk: the filesystems' growth is then the measure, an over-count if anything.
            total, files = max(total, grown), max(files, made or 0)
        if total > self.limit:
            return BYTES, max(added, key=lambda name: added[name])
        if files > self.files:
            return FILES, max(counted, key=lambda name: counted[name])
        return None

    def walk(self) -> tuple[dict[str, int], dict[str, int], bool]:
        """Bytes and files made or changed since the start in each place, and whether any
        was hidden."""
        seen: set[tuple[int, int]] = set()
        added: dict[str, int] = {}
        counted: dict[str, int] = {}
        hidden = False
        for name, top in self.places.items():
            total, files, stack = 0, 0, [top]
            while stack:
                try:
                    entries = list(os.scandir(stack.pop()))
                except OSError:
                    hidden = True
                    continue
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue  # gone meanwhile
                    if stat.S_ISDIR(info.st_mode) and Path(entry.path) not in self.skip:
                        stack.append(Path(entry.path))
                    if info.st_ctime < self.since:
                        continue
                    if info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
                        if (info.st_dev, info.st_ino) in seen:
                            continue
                        seen.add((info.st_dev, info.st_ino))
                    total += info.st_blocks * 512
                    files += 1
            added[name], counted[name] = total, files
        return added, counted, hidden
