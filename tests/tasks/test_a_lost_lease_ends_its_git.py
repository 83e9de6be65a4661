"""A worker whose step lease is lost kills the git its step has going, hooks and all, as it
kills its tool runs: a merge or a commit of the old holder's would otherwise land beside the
new driver's work. The step's heartbeat (services.control.heartbeat) does it, on a lease taken
over and on one that ran out while the database would not take its renewal; the git's caller
gets children.Ended, no git starts until the heartbeat is stopped, and the holder's next fenced
append is refused (given up, when nobody took the lease over).

A real git: a commit whose pre-commit hook sleeps, so that the lease is lost while it runs."""

from __future__ import annotations

import contextvars
import threading
import time
from pathlib import Path

import pytest
from django.db import OperationalError

from runtime import children
from runtime.coordination.leases import Leases
from runtime.events import BudgetDebited, LeaseGranted
from runtime.fenced import Fenced
from runtime.git_run import git
from runtime.journal import LeaseLost, MemoryJournal, StaleEpoch, append_next
from services.control import heartbeat

TTL = 0.3  # seconds: the test's own short lease


@pytest.fixture
def repo(tmp_path: Path, settings) -> Path:
    """A repository with a change staged, whose pre-commit hook says its pid and sleeps."""
    settings.STEP_LEASE_SECONDS = TTL
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "first")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\necho $$ > '{tmp_path / 'hook.pid'}'\nexec sleep 60\n")
    hook.chmod(0o755)
    (root / "a.txt").write_text("two\n")
    git(root, "add", "a.txt")
    return root


def committing(root: Path) -> tuple[threading.Thread, list[object]]:
    """`git commit` on a thread of its own (as a flight's thread runs it, under the holding of
    the step that drives it: the heartbeat's); what it returned or raised goes in the list."""
    said: list[object] = []

    def commit() -> None:
        try:
            said.append(git(root, "commit", "-q", "-m", "second"))
        except Exception as exc:
            said.append(exc)

    thread = threading.Thread(target=contextvars.copy_context().run, args=(commit,))
    thread.start()
    return thread, said


def hook_group(path: Path) -> int:
    """The process group of the hook once it sleeps (git's own: it started a group)."""
    deadline = time.monotonic() + 30
    while not path.exists() or not path.read_text().endswith("\n"):
        assert time.monotonic() < deadline, "the hook never ran"
        time.sleep(0.01)
    pid = int(path.read_text())
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2])


def members(group: int) -> list[int]:
    """The live (not zombie) processes in a process group."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended while we looked
        if int(fields[2]) == group and fields[0] not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


def gone(group: int) -> list[int]:
    """The group's live members once a killed group has had time to die: a SIGKILLed process
    shows in /proc, not yet a zombie, for a moment after the kill (a check right after the
    commit's thread ended saw one in about fifteen runs). Its members if they never go."""
    deadline = time.monotonic() + 10
    while (left := members(group)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD")


def ended_and_refused(thread, said, group, root) -> None:
    """The commit was ended, its group with it; no git starts now."""
    thread.join(30)
    [ended] = said
    assert isinstance(ended, children.Ended), ended
    assert str(ended).startswith("git commit -q -m second was ended")
    assert gone(group) == []  # git, its hook and the hook's sleep: all gone
    assert children.running() == 0
    with pytest.raises(children.Ended, match="git status was not started"):
        git(root, "status")  # the harness's next git, had it gone on


def nothing_committed(root: Path, before: str) -> None:
    assert head(root) == before
    assert git(root, "diff", "--cached", "--name-only") == "a.txt"  # still only staged


def test_a_commit_in_flight_is_killed_when_the_steps_lease_is_taken_over(repo, tmp_path):
    journal = MemoryJournal()
    leases = Leases(journal, "r1")
    lease = leases.acquire("r1", "w1", TTL)
    before = head(repo)
    beat = heartbeat(leases, lease)
    try:
        thread, said = committing(repo)
        group = hook_group(tmp_path / "hook.pid")
        assert said == [] and members(group)  # the commit waits on its hook
        # Another worker takes the run over (its lease had run out, as the holder could not see)
        append_next(journal, lease.stream, [LeaseGranted(resource="r1", holder="w2", expires=9e9)])
        ended_and_refused(thread, said, group, repo)
        fenced = Fenced(journal, lease.stream, lease.epoch)
        with pytest.raises(StaleEpoch):
            fenced.append("run-r1", [BudgetDebited(amount=1)], 0)
    finally:
        beat.stop()
    nothing_committed(repo, before)  # and git runs again once the holding is over
    assert beat.lost == [lease]


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Down(MemoryJournal):
    """A journal whose appends fail as a locked database's do once it is `down`."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.refused = threading.Event()

    def append(self, *args, **kw):
        if self.down:
            self.refused.set()
            raise OperationalError("database is locked")
        return super().append(*args, **kw)


def test_a_commit_in_flight_is_killed_when_the_lease_runs_out_unrenewed(repo, tmp_path):
    journal = Down()
    clock = Clock(1000.0)  # the leases' clock: it moves when the test moves it
    leases = Leases(journal, "r1", clock=clock)
    lease = leases.acquire("r1", "w1", TTL)
    before = head(repo)
    writer = Fenced(journal, lease.stream, lease.epoch)
    beat = heartbeat(leases, lease, writer=writer)
    try:
        thread, said = committing(repo)
        group = hook_group(tmp_path / "hook.pid")
        journal.down = True
        assert journal.refused.wait(30)  # a renewal failed, within the lease: tried again
        assert said == [] and members(group) and beat.lost == []
        clock.now = 1000.0 + TTL  # its expiry, and the renewals still failing
        ended_and_refused(thread, said, group, repo)  # overdue: ended at once
        deadline = time.monotonic() + 30  # a guard against hanging, not a measure
        while not beat.lost and time.monotonic() < deadline:
            time.sleep(0.01)
        assert beat.lost == [lease]  # the next renewal failed too, past the expiry
    finally:
        beat.stop()
    journal.down = False
    nothing_committed(repo, before)
    assert leases.current("r1").holder == "w1"  # nobody took it: the holder could not know
    # The journal's fence would still let the holder write; its writer was given up.
    with pytest.raises(LeaseLost):
        writer.append("run-r1", [BudgetDebited(amount=1)], 0)
    with pytest.raises(LeaseLost):
        writer.check()  # nor runs a tool, a commit or a merge
    assert journal.version("run-r1") == 0
