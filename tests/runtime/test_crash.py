"""Kill a flight with SIGKILL at chosen points, resume it, and get the uninterrupted journal
and workspace."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from collections import Counter

import pytest

from runtime.jsonl import JsonlJournal
from tests.runtime.helpers import facts

pytestmark = pytest.mark.slow

RUN = "r-crash"


def cli(*args, env=None, cwd):
    return subprocess.run(
        [sys.executable, "-m", "runtime", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def files(where):
    """The run's workspace as its files' contents, by path (not .git, nor what Python and
    pytest leave beside the code, which holds times)."""
    root = where / f"{RUN}.workspace"
    skip = {".git", "__pycache__", ".pytest_cache"}
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not skip & set(p.relative_to(root).parts)
    }


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    where = tmp_path_factory.mktemp("reference")
    done = cli(
        "fly",
        "--team",
        "solo",
        "--scenario",
        "solo-fix",
        "--journal",
        "j.jsonl",
        "--run-id",
        RUN,
        cwd=where,
    )
    assert done.returncode == 0, done.stderr
    return facts(where / "j.jsonl"), files(where)


POINTS = [
    "after:WorkspacePrepared#1",
    "after:ModelCalled#1",
    "after:ModelResponded#3",  # the response is recorded with its dispatch, the tool not yet run
    "after:ToolDispatched#4",  # between ToolDispatched and ToolReturned (run_tests)
    "exec:edit_file#1",  # the edit ran, its ToolReturned was never written
    "after:ToolReturned#5",
    "after:AgentFinished#1",  # before the harness's own suite check
    "after:SuiteChecked#1",
]


@pytest.mark.parametrize("point", POINTS)
def test_a_killed_flight_resumes_to_the_journal_of_an_uninterrupted_one(
    tmp_path, uninterrupted, point
):
    log = tmp_path / "executions.log"
    env = {"MINUTES_EXEC_LOG": str(log)}
    crashed = cli(
        "fly",
        "--team",
        "solo",
        "--scenario",
        "solo-fix",
        "--journal",
        "j.jsonl",
        "--run-id",
        RUN,
        env={**env, "MINUTES_FAULT": point},
        cwd=tmp_path,
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    before = JsonlJournal(tmp_path / "j.jsonl").read(f"run-{RUN}")
    returned_before = {
        (r.event.tool, i) for i, r in enumerate(before) if r.event.kind == "ToolReturned"
    }
    ran_before = (
        [line.split(" ", 1)[1] for line in log.read_text().splitlines()] if log.exists() else []
    )

    resumed = cli("resume", "j.jsonl", env=env, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout

    journal, workspace = uninterrupted
    assert facts(tmp_path / "j.jsonl") == journal
    # The journal says what was done; the files must say the same (an edit run again after the
    # kill was made twice while the journal showed it once).
    assert files(tmp_path) == workspace
    records = JsonlJournal(tmp_path / "j.jsonl").read(f"run-{RUN}")
    assert [r.version for r in records] == list(range(1, len(records) + 1))
    # No call that had already returned ran again: every dispatch ran once, except one that was
    # in flight at the kill (dispatched, or executed, but not yet returned), which may run twice.
    runs = Counter(line.split(" ", 1)[1] for line in log.read_text().splitlines())
    twice = [line for line, n in runs.items() if n > 1]
    assert len(twice) <= 1
    for line in twice:
        _tool, dispatch = line.split()
        assert line in ran_before and len(returned_before) < int(dispatch)
    assert sum(runs.values()) - len(twice) == sum(
        1 for r in records if r.event.kind == "ToolReturned"
    )
