"""`python -m runtime resume` drives a run under the run's lease (lease-<run>), as a worker's
step does. It took none: a resume while another process drove the run (a worker, a second
resume of the same journal) drove it too. Now one that finds the lease held by somebody else
is refused, naming the holder and until when, and writes nothing; once the lease is let go
the same command drives the run, under a lease of its own that it gives back."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

from runtime.cli import EXIT_NOT_WRITTEN, main
from runtime.cli_stop import stop_path
from runtime.coordination.leases import Leases
from runtime.jsonl import JsonlJournal

ROOT = Path(__file__).resolve().parents[2]
RUN = "r-leased"
HOLDER = "worker-7:4242:step"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runtime", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def interrupted_run(tmp_path: Path) -> Path:
    """A support-desk run stopped at its first turn boundary: there is more to drive."""
    path = tmp_path / "desk.jsonl"
    assert main(["interrupt", str(path)]) == 0
    fly = ["fly", "--team", "support-desk", "--journal", str(path), "--run-id", RUN]
    assert main(fly) == 4
    assert stop_path(path).exists()  # the stop stays until a resume lifts it
    return path


def holding_process(path: Path) -> subprocess.Popen[str]:
    """Another process that takes the run's lease and holds it until its stdin closes."""
    script = textwrap.dedent(
        f"""
        import sys
        from runtime.coordination.leases import Leases
        from runtime.jsonl import JsonlJournal
        journal = JsonlJournal({str(path)!r})
        leases = Leases(journal, {RUN!r})
        lease = leases.acquire({RUN!r}, {HOLDER!r}, 600)
        print(lease.expires, flush=True)
        sys.stdin.read()
        leases.release(lease, "done elsewhere")
        """
    )
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_a_resume_while_another_process_holds_the_lease_is_refused_and_writes_nothing(tmp_path):
    path = interrupted_run(tmp_path)
    other = holding_process(path)
    try:
        assert other.stdout is not None
        expires = float(other.stdout.readline())
        before = path.read_bytes()
        refused = cli("resume", str(path))
        until = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        assert refused.returncode == EXIT_NOT_WRITTEN, refused.stderr
        assert refused.stderr == (
            f"error: run {RUN} is being driven by {HOLDER}: its lease (lease-{RUN}) is held "
            f"until {until} and renewed while it drives. Nothing was written: try again once "
            "it has let the run go (or its lease has run out)\n"
        )
        assert refused.stdout == ""
        assert path.read_bytes() == before  # not a line: no grant, no turn, no release
        assert stop_path(path).exists()  # nor the operator's stop lifted
    finally:
        other.communicate("", timeout=60)
    assert other.returncode == 0

    # Let go: the same command drives the run to its end, under a lease of its own.
    resumed = cli("resume", str(path))
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    leased = [e for e in lines if e["stream"] == f"lease-{RUN}"]
    # The fly's own grant and release, the other holder's, then the resume's.
    assert [e["holder"] for e in leased[2:4]] == [HOLDER, HOLDER]
    mine = leased[4:]
    assert [e["kind"] for e in mine] == ["LeaseGranted", "LeaseReleased"]
    assert mine[0]["holder"].endswith("(command line)")
    assert mine[1]["outcome"] == "done" and mine[1]["epoch"] == mine[0]["version"]
    # Everything the resume wrote to the run came after its grant and before its release.
    start, end = (lines.index(e) for e in mine)
    resumed_at = next(n for n, e in enumerate(lines) if e["kind"] == "RunResumed")
    finished_at = next(n for n, e in enumerate(lines) if e["kind"] == "TeamFinished")
    assert start < resumed_at < finished_at < end


def test_a_journal_whose_lease_is_held_is_driven_by_neither_fly_nor_a_second_resume(tmp_path):
    """In-process too: the lease is the journal's, whoever holds it."""
    path = interrupted_run(tmp_path)
    journal = JsonlJournal(path)
    lease = Leases(journal, RUN).acquire(RUN, HOLDER, 600)
    assert lease is not None
    before = path.read_bytes()
    assert main(["resume", str(path)]) == EXIT_NOT_WRITTEN
    # A fly under the run's id is refused for the events it has, before any lease is asked.
    fly = ["fly", "--team", "support-desk", "--journal", str(path), "--run-id", RUN]
    assert main(fly) == 2
    assert path.read_bytes() == before


def test_a_command_line_killed_mid_run_is_resumed_at_once_not_once_its_lease_runs_out(tmp_path):
    """Its lease names a command line on this host whose process is gone: released for it,
    and taken. A live one's (the test's own process) still refuses."""
    path = interrupted_run(tmp_path)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    journal = JsonlJournal(path)
    dead = f"ann@{socket.gethostname()}:{gone.pid} (command line)"
    live = f"ann@{socket.gethostname()}:{os.getpid()} (command line)"
    lease = Leases(journal, RUN).acquire(RUN, live, 600)
    assert lease is not None
    assert main(["resume", str(path)]) == EXIT_NOT_WRITTEN
    Leases(journal, RUN).release(lease)
    assert Leases(journal, RUN).acquire(RUN, dead, 600) is not None
    assert main(["resume", str(path)]) == 0
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    leased = [(e["kind"], e["holder"]) for e in lines if e["stream"] == f"lease-{RUN}"]
    assert leased[-4:-2] == [("LeaseGranted", dead), ("LeaseReleased", dead)]
    assert leased[-2][1].endswith("(command line)") and leased[-2][1] != dead
