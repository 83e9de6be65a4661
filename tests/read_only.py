"""A file or folder made read-only to the user running the suite, for a command's refusal of a
path it may not write: its mode for another user; for root, whom modes do not stop, the
immutable attribute (chattr +i), and the test is skipped where the file system or the
container does not allow it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """`path` read-only for the block, writable again after it (pytest removes it later)."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield path
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode:
        pytest.skip("root, and no immutable attribute here (chattr +i) to make a path read-only")
    try:
        yield path
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)
