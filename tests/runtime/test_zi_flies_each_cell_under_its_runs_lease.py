"""`python -m runtime zi` flies each cell under its run's lease (lease-<run>), as `fly`,
`resume` and `fork --go` drive theirs. It took none: a `resume` of a cell's journal while the
2x2 flew that cell drove the same run too. Now the resume is refused, naming the 2x2 as the
holder, and writes nothing; each cell's run is written between its lease's grant and its
release, which says how the cell ended."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runtime.cli import EXIT_INTERRUPTED, EXIT_NOT_WRITTEN
from runtime.coordination.leases import Leases
from runtime.jsonl import JsonlJournal
from tests.fakellm import Reply, completion, wire_call

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FIX = '    fields = line.split(",")'
GUARDED = "    if not line.strip():\n        return []\n" + FIX
USAGE = {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}
OTHER = "worker-7:4242:step"
WAIT = 120  # seconds: a bound on waiting for the other process, never a measurement


def answer(name: str, stall: float = 0.0, **args: object) -> Reply:
    call = wire_call(name, json.dumps(args), f"call_{name}")
    return Reply(completion(None, [call], USAGE), stall=stall)


def coder(stall: float = 0.0) -> list[Reply]:
    return [
        answer("read_file", stall, path="textparse/parser.py"),
        answer("edit_file", path="textparse/parser.py", old=FIX, new=GUARDED),
        answer("run_tests"),
        answer("done", summary="parse('') returns []; the suite is green"),
    ]


ACCEPT = answer("done", verdict="accept", reasons="the guard is right and the tests pass")


def cli(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "runtime", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def stalled_two_by_two(server, tmp_path: Path) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """The 2x2 on the endpoint, its first cell's first model call held back until the test
    lets it go: the 2x2 is then flying that cell, its run's lease held."""
    server.queue(*coder(stall=WAIT), ACCEPT, *coder(), ACCEPT)
    endpoint = {
        "MINUTES_MODEL_BASE_URL": server.url,
        "MINUTES_MODEL": "m-zi",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    argv = ["zi", "--team", "repo-fix", "--dir", str(tmp_path), "--model", "endpoint"]
    return cli(endpoint, *argv, "--json"), endpoint


def flying_first_cell(server, zi: subprocess.Popen[str], tmp_path: Path) -> tuple[Path, str, str]:
    """Once the first cell asks the endpoint: its journal, its run and its lease's holder."""
    deadline = time.monotonic() + WAIT
    while not server.requests and zi.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.requests, zi.communicate(timeout=WAIT) if zi.poll() is not None else ""
    first = tmp_path / "zi-endpoint-endpoint.jsonl"
    before = events(first)
    run = next(e["run_id"] for e in before if e["kind"] == "TeamStarted")
    granted = [e for e in before if e["stream"] == f"lease-{run}"]
    assert [e["kind"] for e in granted[:1]] == ["LeaseGranted"], before[:3]
    holder = granted[0]["holder"]
    assert holder.endswith(f":{zi.pid} (command line)")
    return first, run, holder


def test_a_resume_of_a_cell_the_two_by_two_is_flying_is_refused(server, tmp_path):
    zi, endpoint = stalled_two_by_two(server, tmp_path)
    try:
        first, run, holder = flying_first_cell(server, zi, tmp_path)
        before = events(first)

        # Another command resumes the cell's run while the 2x2 flies it (with no endpoint:
        # it must not get as far as asking one).
        nowhere = {**endpoint, "MINUTES_MODEL_BASE_URL": "http://127.0.0.1:9/v1"}
        resume = cli(nowhere, "resume", str(first))
        out, err = resume.communicate(timeout=WAIT)
        assert resume.returncode == EXIT_NOT_WRITTEN, err
        assert err.startswith(f"error: run {run} is being driven by {holder}: its lease "), err
        assert err.endswith(
            "Nothing was written: try again once it has let the run go (or its lease has run out)\n"
        )
        assert out == ""
        after = events(first)
        # Nothing of the resume's: only the 2x2's own lease renewals may have come since.
        assert after[: len(before)] == before
        assert {(e["kind"], e.get("holder")) for e in after[len(before) :]} <= {
            ("LeaseRenewed", holder)
        }
    finally:
        server.release.set()
        out, err = zi.communicate(timeout=WAIT * 5)
    assert zi.returncode == 0, err
    cells = {(c["coder"], c["reviewer"]): c for c in json.loads(out)}
    assert cells[("endpoint", "endpoint")]["status"] == "done"

    # Each cell's run was written under its own lease, given back saying how the cell ended.
    for (c, r), flown in cells.items():
        lines = events(tmp_path / f"zi-{c}-{r}.jsonl")
        run = flown["run"]
        leased = [e for e in lines if e["stream"] == f"lease-{run}"]
        kinds = [e["kind"] for e in leased]
        assert (kinds[0], kinds[-1]) == ("LeaseGranted", "LeaseReleased"), (c, r, kinds)
        assert set(kinds[1:-1]) <= {"LeaseRenewed"}
        assert leased[0]["holder"] == leased[-1]["holder"] == holder  # the one process
        assert leased[-1]["outcome"] == flown["status"]
        start, end = lines.index(leased[0]), lines.index(leased[-1])
        of_run = [n for n, e in enumerate(lines) if e["stream"] == f"run-{run}"]
        assert of_run and start < of_run[0] and of_run[-1] < end


def test_a_cell_whose_lease_is_taken_mid_flight_stops_and_names_the_cells_not_flown(
    server, tmp_path
):
    """Its lease let go for it and taken by another holder while the cell waits on the
    endpoint: the cell stops at its next write (exit 4), saying so and which cells never
    flew; the other holder's lease stands."""
    zi, _ = stalled_two_by_two(server, tmp_path)
    try:
        first, run, holder = flying_first_cell(server, zi, tmp_path)
        leases = Leases(JsonlJournal(first), run)
        current = leases.current(run)
        assert current is not None and current.holder == holder
        assert leases.release(current, "taken by the test")
        assert leases.acquire(run, OTHER, 600) is not None
    finally:
        server.release.set()
        out, err = zi.communicate(timeout=WAIT * 5)
    assert zi.returncode == EXIT_INTERRUPTED, err
    assert out == ""
    said = err.splitlines()
    assert said[0].startswith(f"error: run {run}: its lease (lease-{run}) was lost by {OTHER} "), (
        err
    )
    rest = ", ".join(
        str(tmp_path / f"zi-{c}.jsonl") for c in ("endpoint-rules", "zi-endpoint", "zi-rules")
    )
    assert said[1] == f"not flown: {rest}; run zi again with another --dir for the whole 2x2"
    # Nothing of the cell's after the other's grant: not a turn, not a release of its own.
    last = events(first)[-1]
    assert (last["kind"], last["holder"]) == ("LeaseGranted", OTHER)


def test_ctrl_c_stops_the_cell_at_a_turn_boundary_and_the_two_by_two_with_it(server, tmp_path):
    """Ctrl-C stopped nothing gracefully: the 2x2 had no stop of its own (a second press left
    a traceback and the cell mid-turn). Now the cell flying stops at its next turn boundary,
    as `fly` stops a run, its lease given back saying so; the 2x2 says how to go on, which
    cells never flew, and exits 4."""
    zi, _ = stalled_two_by_two(server, tmp_path)
    try:
        first, run, holder = flying_first_cell(server, zi, tmp_path)
        zi.send_signal(signal.SIGINT)
        time.sleep(0.5)  # the handler has the press before the answer comes back
    finally:
        server.release.set()
        out, err = zi.communicate(timeout=WAIT * 5)
    assert zi.returncode == EXIT_INTERRUPTED, err
    assert out == ""
    said = err.splitlines()
    assert said[0] == "stopping at the next turn boundary (Ctrl-C again to quit at once)"
    assert said[1] == (
        f"the cell {first} stopped at a turn boundary, as asked; go on with: "
        f"python -m runtime resume {first} --run {run}"
    )
    assert said[2].startswith("not flown: ")
    lines = events(first)
    kinds = [e["kind"] for e in lines if e["stream"] == f"run-{run}"]
    assert kinds[-1] == "RunInterrupted", kinds
    released = lines[-1]
    assert (released["kind"], released["holder"]) == ("LeaseReleased", holder)
    assert released["outcome"] == "interrupted"
    assert sorted(p.name for p in tmp_path.glob("zi-*.jsonl")) == [first.name]


def test_a_two_by_two_into_a_folder_another_holds_is_refused_and_writes_nothing(tmp_path):
    """Two 2x2s given the same --dir at once both found it free (no cell's journal there yet)
    and flew their cells into the same journals. The folder is held while a 2x2 flies: the
    other is refused, naming it, before it writes anything."""
    held = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a 2x2 flying there holds it
        zi = cli({}, "zi", "--team", "repo-fix", "--dir", str(tmp_path))
        out, err = zi.communicate(timeout=WAIT)
    finally:
        os.close(held)
    assert zi.returncode == 2, err
    assert err == f"error: another zi is flying into {tmp_path}: give another --dir\n"
    assert out == "" and list(tmp_path.iterdir()) == []
