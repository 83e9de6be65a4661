"""What a restricted agent's test run changed outside its jurisdiction is put back without the
worker holding any of it in memory, however large, and the refusal names a bounded list."""

from __future__ import annotations

import hashlib
import os
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import pytest

from runtime import jurisdiction, workspace

MB = 1 << 20
TESTER = lambda rel: rel.startswith("tests/")  # noqa: E731  (its jurisdiction: tests/ only)


def write(path: Path, megabytes: int, fill: bytes) -> None:
    """A file of `megabytes` MB, written a megabyte at a time."""
    chunk = fill * MB
    with path.open("wb") as f:
        for _ in range(megabytes):
            f.write(chunk)


def digest(path: Path) -> bytes:
    sha = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(MB):
            sha.update(chunk)
    return sha.digest()


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "r-x.workspace"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "a.py").write_text("x = 1\n")
    return root


def test_large_files_outside_are_taken_out_and_put_back_without_being_held_in_memory(root):
    big = root / "src" / "big.bin"
    write(big, 32, b"a")
    was, stat_was = digest(big), big.stat()

    def run():
        write(root / "src" / "new.bin", 48, b"z")  # new: deleted unread
        write(big, 32, b"b")  # same size, rewritten in place, its mtime set back
        os.utime(big, ns=(stat_was.st_atime_ns, stat_was.st_mtime_ns))
        write(root / "tests" / "mine.bin", 8, b"t")  # within the jurisdiction: stays
        (root / "src" / "a.py").write_text("x = 1\n")  # written, the same: no change
        return {"passed": 1}

    tracemalloc.start()
    try:
        with pytest.raises(workspace.OutsideJurisdiction) as refused:
            workspace.within_jurisdiction(root, TESTER, run)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "changed src/big.bin, src/new.bin, outside" in str(refused.value)
    assert peak < 8 * MB  # the files are 88 MB: read in chunks, never whole
    assert not (root / "src" / "new.bin").exists()
    assert digest(big) == was and big.stat().st_size == 32 * MB
    assert (root / "tests" / "mine.bin").stat().st_size == 8 * MB
    assert (root / "src" / "a.py").read_text() == "x = 1\n"


def test_a_refusal_names_twenty_changed_paths_and_counts_the_rest(root):
    def run():
        for i in range(30):
            (root / "src" / f"planted{i:02}.py").write_text("x")
        return {}

    with pytest.raises(workspace.OutsideJurisdiction) as refused:
        workspace.within_jurisdiction(root, TESTER, run)
    message = str(refused.value)
    assert "src/planted19.py and 10 more, outside what this agent may edit" in message
    assert "planted20" not in message
    assert sorted(os.listdir(root / "src")) == ["a.py"]


def test_the_snapshots_time_comes_out_of_pytests_timeout_not_the_restores_margin(root, monkeypatch):
    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(jurisdiction, "time", SimpleNamespace(monotonic=lambda: clock.now))
    took = jurisdiction.snapshot

    def slow_snapshot(*args):
        clock.now += 12  # a large tree outside the jurisdiction
        return took(*args)

    monkeypatch.setattr(jurisdiction, "snapshot", slow_snapshot)
    given = []
    monkeypatch.setattr(
        workspace, "pytest_run", lambda root, target, timeout, sandbox: given.append(timeout) or {}
    )
    tools = {t.name: t for t in workspace.toolset(root, TESTER, test_timeout=30)}
    tools["run_tests"].fn()
    assert given == [18]


def test_a_directory_whose_permissions_the_run_took_away_gets_them_back_and_is_named(root):
    """`chmod 000 src` hid src's files from the walk: the run passed, src stayed unreadable
    (to a worker not running as root, to the restore and to git's next commit), and a file
    changed inside it went unseen."""
    (root / "src" / "deep").mkdir()
    (root / "src" / "deep" / "b.py").write_text("y = 2\n")
    modes = {p: p.stat().st_mode & 0o7777 for p in (root / "src", root / "src" / "deep")}

    def run():
        (root / "src" / "deep" / "b.py").write_text("y = 3\n")
        (root / "src" / "deep").chmod(0o000)
        (root / "src").chmod(0o000)
        (root / "tests" / "mine").mkdir()
        (root / "tests" / "mine" / "test_x.py").write_text("")
        (root / "tests" / "mine").chmod(0o700)  # within the jurisdiction: its own to set
        return {"passed": 1}

    with pytest.raises(workspace.OutsideJurisdiction) as refused:
        workspace.within_jurisdiction(root, TESTER, run)
    assert "the test run changed src, src/deep, src/deep/b.py," in str(refused.value)
    assert {p: p.stat().st_mode & 0o7777 for p in modes} == modes
    assert (root / "src" / "deep" / "b.py").read_text() == "y = 2\n"
    assert (root / "tests" / "mine").stat().st_mode & 0o7777 == 0o700
