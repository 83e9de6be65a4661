"""Agent code cannot fill the host's disk: what a run adds to its workspace and its scratch
directory together is bounded, in bytes (Limits.disk_bytes) and in files (Limits.files: empty
files take no bytes and every inode), and a run past either is ended naming the limit and the
directory; the sandbox's /tmp takes nothing; nothing of a run is left in the host's
temporary directory."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from runtime.sandbox import Limits, Sandbox
from tests.security.sandboxing import fresh_workspace, needs_bwrap, tool

pytestmark = [needs_bwrap, pytest.mark.slow]  # real processes run to their limits

LIMIT = 16 << 20
FILL = """\
import os, tempfile


def test_fill():
    where = {where}
    os.makedirs(where, exist_ok=True)
    for i in range(1000):  # 1 GB in files of 1 MB, each under the file limit
        with open(os.path.join(where, f"fill{{i}}.bin"), "wb") as f:
            f.write(b"x" * (1 << 20))
"""


FILES = 5_000
EMPTY = """\
import os


def test_empty_files():
    where = {where}
    os.makedirs(where, exist_ok=True)
    for i in range(300_000):  # empty files: no bytes to speak of, an inode each
        open(os.path.join(where, f"empty{{i}}"), "w").close()
"""


@pytest.fixture(autouse=True)
def host_tmp(tmp_path, monkeypatch) -> Path:
    """The host's temporary directory, where the runs' scratch directories are made: one of
    this test's own, so what is left in it is this test's runs' (others run beside it)."""
    place = tmp_path / "host-tmp"
    place.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(place))
    return place


def filled(tmp_path: Path, where: str) -> tuple[Path, dict]:
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_fill.py").write_text(FILL.format(where=where))
    limited = Sandbox(limits=Limits(disk_bytes=LIMIT))
    return root, tool(root, "run_tests", sandbox=limited, target="tests/test_fill.py")


def written(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("fill*.bin"))


def test_filling_the_workspace_ends_the_run_naming_the_limit_and_the_workspace(tmp_path, host_tmp):
    root, observation = filled(tmp_path, "'filled'")
    assert observation["error"] == {
        "type": "LimitReached",
        "message": "pytest was ended: it wrote more than 16,777,216 bytes (Limits.disk_bytes) "
        "into its workspace",
    }
    # Ended on the way, well short of the 1 GB it meant to write: not found past the limit
    # once it had ended. (It overshoots by what it writes between two looks, 0.1 s apart.)
    assert LIMIT < written(root / "filled") < 512 << 20
    assert list(host_tmp.iterdir()) == []


@pytest.mark.parametrize("where", ["tempfile.gettempdir()", "os.environ['HOME']"])
def test_filling_the_scratch_directory_ends_the_run_and_leaves_nothing(tmp_path, host_tmp, where):
    root, observation = filled(tmp_path, where)
    assert observation["error"] == {
        "type": "LimitReached",
        "message": "pytest was ended: it wrote more than 16,777,216 bytes (Limits.disk_bytes) "
        "into its scratch directory (HOME, TMPDIR)",
    }
    assert list(host_tmp.iterdir()) == []  # the scratch directory is gone, and what it held
    assert written(root) == 0


def test_the_sandbox_tmp_takes_nothing_and_the_host_tmp_gets_nothing(tmp_path, host_tmp):
    """The sandbox's /tmp is a tmpfs, memory no rlimit counts: it is read-only (and sized)."""
    _, observation = filled(tmp_path, "'/tmp/minutes-fill-attempt'")
    result = observation["result"]
    assert result["failed"] == 1 and "Read-only file system" in result["trace"]
    assert not Path("/tmp/minutes-fill-attempt").exists()
    assert list(host_tmp.iterdir()) == []


def test_a_run_under_the_limit_is_not_ended(tmp_path):
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_small.py").write_text(
        "def test_small():\n    open('small.bin', 'wb').write(b'x' * (4 << 20))\n"
    )
    limited = Sandbox(limits=Limits(disk_bytes=LIMIT))
    observation = tool(root, "run_tests", sandbox=limited, target="tests/test_small.py")
    assert observation["result"] == {"passed": 1, "failed": 0}


def emptied(tmp_path: Path, where: str, files: int = FILES) -> tuple[Path, dict]:
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_empty.py").write_text(EMPTY.format(where=where))
    limited = Sandbox(limits=Limits(files=files))
    return root, tool(root, "run_tests", sandbox=limited, target="tests/test_empty.py")


def test_making_empty_files_in_the_workspace_ends_the_run_naming_the_limit_and_the_workspace(
    tmp_path, host_tmp
):
    root, observation = emptied(tmp_path, "'emptied'")
    assert observation["error"] == {
        "type": "LimitReached",
        "message": "pytest was ended: it made more than 5,000 files and directories "
        "(Limits.files) in its workspace",
    }
    # Ended on the way: it overshoots by what it makes between two looks and during a walk.
    assert FILES < len(list((root / "emptied").iterdir())) < 150_000
    assert list(host_tmp.iterdir()) == []


def test_making_empty_files_in_the_scratch_directory_ends_the_run(tmp_path, host_tmp):
    root, observation = emptied(tmp_path, "os.environ['TMPDIR']")
    assert observation["error"] == {
        "type": "LimitReached",
        "message": "pytest was ended: it made more than 5,000 files and directories "
        "(Limits.files) in its scratch directory (HOME, TMPDIR)",
    }
    assert list(host_tmp.iterdir()) == []  # the scratch directory is gone, and what it held
    assert list(root.rglob("empty*")) == []


def test_a_run_making_files_under_the_limit_is_not_ended(tmp_path):
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_some.py").write_text(
        "def test_some():\n    for i in range(1000):\n        open(f'some{i}', 'w').close()\n"
    )
    limited = Sandbox(limits=Limits(files=FILES))
    observation = tool(root, "run_tests", sandbox=limited, target="tests/test_some.py")
    assert observation["result"] == {"passed": 1, "failed": 0}
