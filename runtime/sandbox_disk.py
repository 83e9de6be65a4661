"""How many bytes a run of agent code has added to the host directories it may write.

`Limits.file_bytes` bounds one file; nothing else bounded the total, and a test could write
thousands of big files into its workspace or scratch directory. The run's wait loop asks
`DiskWatch.over` at each tick; it answers which directory is past `Limits.disk_bytes`, if one is.

Measuring a worktree means walking it, which at 100,000 files costs a good part of a second:
not something to do every tick. So the watch looks first at what is cheap, the used space of
the filesystems the directories are on (one statvfs each), and walks the directories only when
that has grown by the limit or more since the run started: a run that writes little is never
walked. The used space counts everybody's writes, so it only says when to look; the walk counts
what this run made or changed (entries whose ctime is after its start, their allocated blocks,
a hard-linked file once), and walks are spaced by ten times the last one's cost, so however busy
the filesystem is, the watch takes a tenth of a core at most. A modified file older than the run
counts whole, as if new: an over-count towards the limit, never an under-count.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

TICK = 0.1  # seconds between looks at the filesystems' used space (a statvfs each: microseconds)


def _used(path: Path) -> int:
    fs = os.statvfs(path)
    return (fs.f_blocks - fs.f_bfree) * fs.f_frsize


class DiskWatch:
    """`places`: each writable directory by the words that name it ("its workspace")."""

    def __init__(self, places: dict[str, Path], limit: int, skip: frozenset[Path]) -> None:
        self.places, self.limit, self.skip = places, limit, skip
        self.since = time.time()
        self.devices: dict[int, Path] = {}
        for path in places.values():
            self.devices.setdefault(path.stat().st_dev, path)
        self.before = {dev: _used(path) for dev, path in self.devices.items()}
        self.next_look = time.monotonic() + TICK
        self.next_walk = 0.0

    def grown(self) -> int:
        """What the filesystems' used space has grown by since the start, everybody's writes."""
        return sum(max(_used(p) - self.before[dev], 0) for dev, p in self.devices.items())

    def over(self, last: bool = False) -> str | None:
        """The words naming the directory the run filled most, if it is past the limit.
        `last`: the run has ended; look now, whatever the spacing."""
        now = time.monotonic()
        if now < self.next_look and not last:
            return None
        self.next_look = now + TICK
        grown = self.grown()
        if grown < self.limit or (now < self.next_walk and not last):
            return None
        added, hidden = self.walk()
        self.next_walk = time.monotonic() + 10 * (time.monotonic() - now)
        total = sum(added.values())
        if hidden:
            # A directory the run locked (chmod 0, a worker not root) hides what is in it from
            # the walk: the filesystems' growth is then the measure, an over-count if anything.
            total = max(total, grown)
        if total <= self.limit:
            return None
        return max(added, key=lambda name: added[name])

    def walk(self) -> tuple[dict[str, int], bool]:
        """Bytes made or changed since the start in each place, and whether any was hidden."""
        seen: set[tuple[int, int]] = set()
        added, hidden = {}, False
        for name, top in self.places.items():
            total, stack = 0, [top]
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
            added[name] = total
        return added, hidden
