"""Ctrl-C twice during `python -m runtime fly`: the help promises "Ctrl-C again to quit at
once", and it quit with a traceback of some 60 lines (status 130). It quits in a line now,
saying how to resume, with the status of an interrupted run; resume finishes the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from runtime.cli import EXIT_INTERRUPTED
from tests.runtime.test_crash import cli

pytestmark = pytest.mark.slow

RUN = "r-twice"


def test_a_second_ctrl_c_quits_at_once_in_a_line_and_the_run_resumes(tmp_path):
    journal = tmp_path / "j.jsonl"
    # The flight waits after its first tool call is journalled: where the two Ctrl-Cs land.
    fault = {"MINUTES_FAULT": "hang:ToolDispatched#1:60"}
    fly = ["fly", "--team", "solo", "--scenario", "solo-fix", "--journal", str(journal)]
    flying = subprocess.Popen(
        [sys.executable, "-m", "runtime", *fly, "--run-id", RUN],
        cwd=tmp_path,
        env={**os.environ, **fault},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (journal.exists() and "ToolDispatched" in journal.read_text()):
            assert flying.poll() is None and time.monotonic() < deadline, flying.communicate()
            time.sleep(0.05)
        flying.send_signal(signal.SIGINT)
        time.sleep(0.02)
        flying.send_signal(signal.SIGINT)
        out, err = flying.communicate(timeout=30)
    finally:
        if flying.poll() is None:
            flying.kill()
            flying.wait()
    assert flying.returncode == EXIT_INTERRUPTED, out + err
    assert "Traceback" not in err and out == ""
    assert err.splitlines() == [
        "stopping at the next turn boundary (Ctrl-C again to quit at once)",
        f"run {RUN}: interrupted at once (Ctrl-C twice); it rests where {journal} ends: "
        f"`python -m runtime resume {journal} --run {RUN}` goes on from there",
    ]
    resumed = cli("resume", str(journal), "--run", RUN, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"run {RUN}: done" in resumed.stdout
